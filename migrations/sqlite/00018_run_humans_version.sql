-- +goose Up
-- Counts the changes of a finished run's human ratings (the source its
-- report uses, run_human_sources): every server process keeps the reports
-- and comparisons of finished runs in memory, and compares this with the
-- run it reads to know that a choice made through another process has
-- made them stale.
ALTER TABLE runs ADD COLUMN humans_version INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN humans_version;
