-- +goose Up
-- How long a reasoning model is asked to think, sent as reasoning_effort
-- (low, medium or high: OpenAI's reasoning models and OpenRouter take it).
-- '' sends nothing, which is what every judge stored so far sends: their
-- requests stay byte for byte as they were.
ALTER TABLE judges ADD COLUMN reasoning_effort TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE judges DROP COLUMN reasoning_effort;
