-- +goose Up
-- A workspace's runs, newest first: the runs list, the project page, the
-- API's list of runs and their counts filter by workspace and read a page
-- by id. Without this index they read every run of the database (or of
-- one status, through runs_status) to find one workspace's.
CREATE INDEX runs_workspace ON runs (workspace_id, id);

-- +goose Down
DROP INDEX runs_workspace;
