-- +goose Up
-- run_scores.row_id and review_ratings.row_id referenced dataset_rows(id)
-- ON DELETE CASCADE, and no index led with either column: purging a
-- dataset's rows read both tables whole once a row (its foreign-key
-- check), inside one transaction. review_ratings gets the index;
-- run_scores loses the reference (SQLite's 00035 says why: an index would
-- cost every stored answer, and the reference never cascaded to
-- anything, a dataset being purged with every run on it, scores first).
CREATE INDEX review_ratings_row ON review_ratings(row_id);
ALTER TABLE run_scores DROP CONSTRAINT run_scores_row_id_fkey;

-- +goose Down
ALTER TABLE run_scores ADD CONSTRAINT run_scores_row_id_fkey FOREIGN KEY (row_id) REFERENCES dataset_rows(id) ON DELETE CASCADE;
DROP INDEX review_ratings_row;
