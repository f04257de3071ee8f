-- +goose Up
-- How many of a run's scores were computed from fewer sampled answers than
-- the method asked for (G-Eval's sampling, CloserLook): some of a unit's
-- calls failed, at least half of the answers came, and the score was kept
-- with the shortfall recorded in the unit's problems and details.
ALTER TABLE runs ADD COLUMN short_scores INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN short_scores;
