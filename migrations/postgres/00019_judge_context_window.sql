-- +goose Up
-- The judge model's context window in tokens, as its owner typed it (NULL:
-- not known). The launch form compares it with the longest prompt a run
-- would send: some servers (Ollama) cut a prompt that does not fit without
-- saying so, and the scores then judge text the model never saw.
ALTER TABLE judges ADD COLUMN context_tokens INTEGER;

-- +goose Down
ALTER TABLE judges DROP COLUMN context_tokens;
