-- +goose Up
-- The API's lists read a page at a time by ascending id after a cursor
-- (GET /api/v1/projects, /judges, /tokens, /datasets/{id}/reviews):
-- each needs an index that gives its rows in id order. A workspace's
-- projects and judges, and a person's tokens, were indexed without the
-- id (SQLite keeps the row id in every index, PostgreSQL does not):
-- those indexes gain it. A workspace's tokens (an owner's list) and a
-- dataset's reviews had no such index. A criterion's reviews are read
-- through the dataset's, skipping the other criteria's: an index by
-- criterion and id was preferred, on a table not analyzed yet, to
-- review_ratings_sample for the reviews of one sample (which a sample
-- page and the review queue read).
DROP INDEX projects_workspace;
CREATE INDEX projects_workspace ON projects (workspace_id, id);
DROP INDEX judges_workspace;
CREATE INDEX judges_workspace ON judges (workspace_id, id);
DROP INDEX api_tokens_user;
CREATE INDEX api_tokens_user ON api_tokens (user_id, workspace_id, id);
CREATE INDEX api_tokens_workspace ON api_tokens (workspace_id, id);
CREATE INDEX review_ratings_dataset ON review_ratings (dataset_id, id);

-- +goose Down
DROP INDEX review_ratings_dataset;
DROP INDEX api_tokens_workspace;
DROP INDEX api_tokens_user;
CREATE INDEX api_tokens_user ON api_tokens (user_id, workspace_id);
DROP INDEX judges_workspace;
CREATE INDEX judges_workspace ON judges (workspace_id);
DROP INDEX projects_workspace;
CREATE INDEX projects_workspace ON projects (workspace_id);
