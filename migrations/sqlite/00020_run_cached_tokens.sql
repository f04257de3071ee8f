-- +goose Up
-- What the answers a run took from the answer cache cost when they were
-- paid for: a run answered partly or wholly from the cache can then say
-- what it would have cost without it, and be compared with runs that paid.
ALTER TABLE runs ADD COLUMN cached_prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cached_completion_tokens INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN cached_completion_tokens;
ALTER TABLE runs DROP COLUMN cached_prompt_tokens;
