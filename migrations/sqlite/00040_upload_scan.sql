-- +goose Up
-- What the upload's one streaming pass counted (rows, skipped lines, every
-- column, and whether the first row was read as data), as JSON: the mapping
-- page after an upload showed the row count by reading the whole file again
-- on each view (0.54 s for a million rows); it now reads the file's first
-- rows only. NULL for uploads stored before this, which are read whole.
ALTER TABLE pending_uploads ADD COLUMN scan TEXT;

-- +goose Down
ALTER TABLE pending_uploads DROP COLUMN scan;
