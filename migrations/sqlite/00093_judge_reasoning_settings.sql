-- +goose Up
-- What a judge's endpoint takes of the request, for OpenAI's reasoning
-- models (o1, o3, o4-mini, gpt-5), which refuse max_tokens and any
-- temperature or top_p but the default. token_limit is the name the
-- answer's cap is sent under: 'max_tokens' (what every judge stored so far
-- sends) or 'max_completion_tokens'. default_sampling_only is set for a
-- judge that takes only the default temperature and top_p: neither is sent
-- to it, and a run is refused at launch unless its settings say the
-- default. Test connection finds both from the endpoint's refusals.
ALTER TABLE judges ADD COLUMN token_limit TEXT NOT NULL DEFAULT 'max_tokens';
ALTER TABLE judges ADD COLUMN default_sampling_only BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE judges DROP COLUMN default_sampling_only;
ALTER TABLE judges DROP COLUMN token_limit;
