-- +goose Up
-- A run's elapsed time counts only the time it was going: paused_at is
-- when it was paused (cleared by Continue), stopped_ms the milliseconds it
-- spent paused, or finished before a resume, once it had started.
ALTER TABLE runs ADD COLUMN paused_at DATETIME;
ALTER TABLE runs ADD COLUMN stopped_ms INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN stopped_ms;
ALTER TABLE runs DROP COLUMN paused_at;
