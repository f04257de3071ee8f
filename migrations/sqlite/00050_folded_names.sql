-- +goose Up
-- The name of each run and experiment as a search compares it
-- (models.FoldName: case folded with Unicode's full folding, the accents of
-- Latin and Greek letters dropped), so that "evaluation" finds
-- "Évaluation" on SQLite as on PostgreSQL. Written with the name by the
-- product; NULL for the rows stored before, which models.FoldStoredNames
-- fills in Go right after the migrations (SQL cannot fold as it does).
ALTER TABLE runs ADD COLUMN name_folded TEXT;
ALTER TABLE experiments ADD COLUMN name_folded TEXT;

-- +goose Down
ALTER TABLE experiments DROP COLUMN name_folded;
ALTER TABLE runs DROP COLUMN name_folded;
