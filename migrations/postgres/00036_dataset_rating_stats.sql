-- +goose Up
-- A summary of a dataset's ratings, column by column (count, sum, lowest,
-- highest, squared deviations; models.RatingStats as JSON), counted when
-- its rows are stored: the dataset page, the rubric editor and the launch
-- form read it instead of every row's ratings. NULL for a dataset stored
-- before: the first page that needs it counts it and stores it.
ALTER TABLE datasets ADD COLUMN rating_stats TEXT;

-- +goose Down
ALTER TABLE datasets DROP COLUMN rating_stats;
