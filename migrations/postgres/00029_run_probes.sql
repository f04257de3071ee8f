-- +goose Up
-- The breaker's probes: the tiny requests a run sends while it waits for
-- its judge to answer again. They are paid calls when answered, but no
-- batch's, so they are counted apart from the run's calls and tokens:
-- how many were sent, and the tokens the endpoint reported for them.
ALTER TABLE runs ADD COLUMN probe_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN probe_prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN probe_completion_tokens INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN probe_completion_tokens;
ALTER TABLE runs DROP COLUMN probe_prompt_tokens;
ALTER TABLE runs DROP COLUMN probe_calls;
