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
-- triggers move the row on; the row stays.
CREATE TABLE dataset_review_versions (
    dataset_id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION review_ratings_version_bump() RETURNS trigger AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO dataset_review_versions (dataset_id, version) VALUES (OLD.dataset_id, 1)
            ON CONFLICT (dataset_id) DO UPDATE SET version = dataset_review_versions.version + 1;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.dataset_id <> OLD.dataset_id) THEN
        INSERT INTO dataset_review_versions (dataset_id, version) VALUES (NEW.dataset_id, 1)
            ON CONFLICT (dataset_id) DO UPDATE SET version = dataset_review_versions.version + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER review_ratings_version_bump AFTER INSERT OR DELETE OR UPDATE OF workspace_id, dataset_id, row_id, criterion, reviewer, user_id, score, lo, hi ON review_ratings
    FOR EACH ROW EXECUTE FUNCTION review_ratings_version_bump();

-- +goose StatementBegin
CREATE FUNCTION rating_exclusions_version_bump() RETURNS trigger AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE dataset_review_versions SET version = version + 1
            WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id = OLD.workspace_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.workspace_id <> OLD.workspace_id) THEN
        UPDATE dataset_review_versions SET version = version + 1
            WHERE dataset_id IN (SELECT id FROM datasets WHERE workspace_id = NEW.workspace_id);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER rating_exclusions_version_bump AFTER INSERT OR DELETE OR UPDATE OF workspace_id, user_id ON rating_exclusions
    FOR EACH ROW EXECUTE FUNCTION rating_exclusions_version_bump();

-- +goose Down
DROP TRIGGER rating_exclusions_version_bump ON rating_exclusions;
DROP FUNCTION rating_exclusions_version_bump();
DROP TRIGGER review_ratings_version_bump ON review_ratings;
DROP FUNCTION review_ratings_version_bump();
DROP TABLE dataset_review_versions;
