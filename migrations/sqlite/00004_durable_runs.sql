-- +goose Up
-- Judge retries of a run (HTTP attempts beyond the first of each call),
-- counted as answers are stored and shown on the run page.
ALTER TABLE runs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
-- Set while the run's circuit breaker is open: the run waits for its judge
-- (since when, and the last error) instead of failing batches.
ALTER TABLE runs ADD COLUMN waiting_since DATETIME;
ALTER TABLE runs ADD COLUMN waiting_error TEXT NOT NULL DEFAULT '';
-- How many times the run was resumed to re-send batches without an answer.
ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN resumes;
ALTER TABLE runs DROP COLUMN waiting_error;
ALTER TABLE runs DROP COLUMN waiting_since;
ALTER TABLE runs DROP COLUMN retries;
