-- +goose Up
-- The scores of a sampling run (CloserLook, G-Eval's sampling) left
-- missing because some of their sampled answers could be read but fewer
-- than the run's fewest readable answers for a score
-- (method_settings.min_readable_share): counted as they are stored, as
-- missing_scores and short_scores are, so the run's status card tells them
-- from unreadable answers while it runs. Runs stored before have none:
-- they had no minimum, so 0 is their true count.
ALTER TABLE runs ADD COLUMN too_few_scores INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN too_few_scores;
