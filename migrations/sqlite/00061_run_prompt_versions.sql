-- +goose Up
-- The prompt template versions a run's executions built their prompts
-- with, after the one it was launched with (runs.prompt_template_version,
-- 00058): a JSON list of {"version", "since"}, one entry each time a
-- resume, continue or takeover ran on code whose method wording had
-- changed. A batch answered before an entry's "since" was built with the
-- version before it. Empty for a run whose every execution used its
-- launch version (NULL or empty: every run stored before this migration reads so).
ALTER TABLE runs ADD COLUMN prompt_versions TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN prompt_versions;
