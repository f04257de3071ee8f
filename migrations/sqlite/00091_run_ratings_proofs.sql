-- +goose Up
-- The proof that a run's browser-ratings key (report.usedRatingsKey, part of
-- its stored summary's and per-sample results' input keys) is still current,
-- without reading and hashing every current rating of the dataset at each
-- view of the run page, the review queue or a sample (BENCHMARKS.md,
-- reviews47 and ratings48). proof hashes what the key depends on that a few
-- small queries can read: the run's choice and human scales, a tally of the
-- reviews of its criteria up to the cut-off (count, accounts, ids), the
-- workspace's excluded raters and the names of the accounts the key names
-- (user_ids, comma-separated). While a view computes the same proof, the
-- stored ratings_key is served; otherwise the key is computed from the
-- ratings as before and the row replaced.
CREATE TABLE run_ratings_proofs (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    dataset_id INTEGER NOT NULL,
    proof TEXT NOT NULL,
    user_ids TEXT NOT NULL DEFAULT '',
    ratings_key TEXT NOT NULL,
    computed_at DATETIME NOT NULL
);
CREATE INDEX run_ratings_proofs_dataset ON run_ratings_proofs(dataset_id);

-- Reviews are only added and deleted (which the tally counts) or lose their
-- account (counted too); the product never edits one in place. Should
-- anything edit what a key reads of a review (its sample, criterion,
-- reviewer, rating or scale), the proofs of its dataset's runs are dropped,
-- and their keys computed from the ratings again.
-- +goose StatementBegin
CREATE TRIGGER review_ratings_forget_proofs AFTER UPDATE OF dataset_id, row_id, criterion, reviewer, user_id, score, lo, hi ON review_ratings
BEGIN
    DELETE FROM run_ratings_proofs WHERE dataset_id IN (OLD.dataset_id, NEW.dataset_id);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER review_ratings_forget_proofs;
DROP TABLE run_ratings_proofs;
