-- +goose Up
-- What the import of a dataset's file said about it (fields the judge sees
-- that are empty in some rows, and which rows), as a JSON list of
-- sentences, stored with the dataset in the import's transaction so that
-- the dataset page says it for good, not only once after the upload. NULL:
-- nothing to say, or imported before the notes were kept.
ALTER TABLE datasets ADD COLUMN import_notes TEXT;

-- +goose Down
ALTER TABLE datasets DROP COLUMN import_notes;
