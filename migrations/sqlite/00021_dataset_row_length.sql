-- +goose Up
-- The launch form looks for a dataset's longest rows (to measure the
-- longest prompt against the judge's context window): with this index it
-- reads a handful of index entries instead of every row's length.
CREATE INDEX dataset_rows_length ON dataset_rows(dataset_id, octet_length(data));

-- +goose Down
DROP INDEX dataset_rows_length;
