-- +goose Up
-- A number that moves on with every change of what a dataset's current
-- ratings are: a review added, deleted (with its sample, dataset or
-- workspace) or edited (losing its account when the account is deleted),
-- and an exclusion or readmission of a rater in its workspace. The review
-- queue's team progress (models.TeamRatedSamples) is counted once per
-- version and served from memory while the version stands, where it read
-- every review of the criterion at each view (reviewperf51). The triggers
-- move it in the transaction of the change itself, whatever code path
-- makes it. A dataset without a row is at version 0: it never had a review.
-- No reference to datasets: a dataset's deletion deletes its reviews, whose
-- triggers move the row on; the row stays, so a dataset id SQLite gives
-- again later goes on from there and never meets a count of the old one.
CREATE TABLE dataset_review_versions (
    dataset_id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL
);

-- +goose StatementBegin
CREATE TRIGGER review_ratings_version_insert AFTER INSERT ON review_ratings
BEGIN
    INSERT INTO dataset_review_versions (dataset_id, version) VALUES (NEW.dataset_id, 1)
        ON CONFLICT (dataset_id) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER review_ratings_version_delete AFTER DELETE ON review_ratings
BEGIN
    INSERT INTO dataset_review_versions (dataset_id, version) VALUES (OLD.dataset_id, 1)
        ON CONFLICT (dataset_id) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER review_ratings_version_update AFTER UPDATE OF workspace_id, dataset_id, row_id, criterion, reviewer, user_id, score, lo, hi ON review_ratings
BEGIN
    INSERT INTO dataset_review_versions (dataset_id, version) VALUES (OLD.dataset_id, 1)
        ON CONFLICT (dataset_id) DO UPDATE SET version = version + 1;
    INSERT INTO dataset_review_versions (dataset_id, version) VALUES (NEW.dataset_id, 1)
        ON CONFLICT (dataset_id) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rating_exclusions_version_insert AFTER INSERT ON rating_exclusions
BEGIN
    UPDATE dataset_review_versions SET version = version + 1
        WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id = NEW.workspace_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rating_exclusions_version_delete AFTER DELETE ON rating_exclusions
BEGIN
    UPDATE dataset_review_versions SET version = version + 1
        WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id = OLD.workspace_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER rating_exclusions_version_update AFTER UPDATE OF workspace_id, user_id ON rating_exclusions
BEGIN
    UPDATE dataset_review_versions SET version = version + 1
        WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id IN (OLD.workspace_id, NEW.workspace_id));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER rating_exclusions_version_update;
DROP TRIGGER rating_exclusions_version_delete;
DROP TRIGGER rating_exclusions_version_insert;
DROP TRIGGER review_ratings_version_update;
DROP TRIGGER review_ratings_version_delete;
DROP TRIGGER review_ratings_version_insert;
DROP TABLE dataset_review_versions;
