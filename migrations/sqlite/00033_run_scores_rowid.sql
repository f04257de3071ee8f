-- +goose Up
-- run_scores without AUTOINCREMENT: every insert into a table declared
-- AUTOINCREMENT also updates its row in sqlite_sequence, one more page
-- (one more WAL frame, two more writes) in every stored answer's commit,
-- and no reader needs ids that are never reused (scores are read by run,
-- criterion, round, row and batch; id only orders them, and a new score
-- still gets an id above every stored one). SQLite cannot drop
-- AUTOINCREMENT in place, so the table is copied (ids kept).
-- PostgreSQL's 00033 changes nothing (its sequences have no such cost).
CREATE TABLE run_scores_new (
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
INSERT INTO run_scores_new (id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis)
    SELECT id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis FROM run_scores;
DROP TABLE run_scores;
ALTER TABLE run_scores_new RENAME TO run_scores;
CREATE UNIQUE INDEX run_scores_place ON run_scores(run_id, criterion_index, round, row_id);
CREATE INDEX run_scores_batch ON run_scores(batch_id);
DELETE FROM sqlite_sequence WHERE name = 'run_scores';

-- +goose Down
CREATE TABLE run_scores_old (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
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
