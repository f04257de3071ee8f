-- +goose Up
-- run_scores.row_id and review_ratings.row_id referenced dataset_rows(id)
-- ON DELETE CASCADE, and no index led with either column. Deleting a
-- dataset's rows (purging it from the trash, by hand or by the hourly
-- sweep) then looked for each row's scores and reviews by reading both
-- tables whole, once a row: a dataset of 1,000,000 rows purged beside
-- another run's 200,000 scores held the write lock for minutes (hours to
-- its end), and every other write failed after the busy timeout.
--
-- review_ratings (a few rows a sample at most) gets the index. run_scores
-- loses the row_id reference instead: an index on it would cost every
-- stored answer a third index to update (about a third more CPU an answer
-- in BenchmarkStoreAnswer), and the reference never did anything: a
-- score's row is a row of its run's dataset, and a dataset is purged with
-- every run on it, their scores first (models.purgeEntry), so no deleted
-- row ever had scores left to cascade to. SQLite cannot drop a reference
-- in place, so the table is copied (ids kept), as in 00033.
CREATE INDEX review_ratings_row ON review_ratings(row_id);
CREATE TABLE run_scores_new (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch_id INTEGER NOT NULL REFERENCES run_batches(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    round INTEGER NOT NULL,
    row_id INTEGER NOT NULL,
    label INTEGER NOT NULL,
    score REAL,
    analysis TEXT NOT NULL DEFAULT ''
);
INSERT INTO run_scores_new (id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis)
    SELECT id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis FROM run_scores;
DROP TABLE run_scores;
ALTER TABLE run_scores_new RENAME TO run_scores;
CREATE UNIQUE INDEX run_scores_place ON run_scores(run_id, criterion_index, round, row_id);
CREATE INDEX run_scores_batch ON run_scores(batch_id);

-- +goose Down
CREATE TABLE run_scores_old (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch_id INTEGER NOT NULL REFERENCES run_batches(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    round INTEGER NOT NULL,
    row_id INTEGER NOT NULL REFERENCES dataset_rows(id) ON DELETE CASCADE,
    label INTEGER NOT NULL,
    score REAL,
    analysis TEXT NOT NULL DEFAULT ''
);
INSERT INTO run_scores_old (id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis)
    SELECT id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis FROM run_scores;
DROP TABLE run_scores;
ALTER TABLE run_scores_old RENAME TO run_scores;
CREATE UNIQUE INDEX run_scores_place ON run_scores(run_id, criterion_index, round, row_id);
CREATE INDEX run_scores_batch ON run_scores(batch_id);
DROP INDEX review_ratings_row;
