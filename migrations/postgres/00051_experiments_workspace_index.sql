-- +goose Up
-- A workspace's experiments, newest first: the share links page offers and
-- names them (ListExperimentNames, whatever their project) by workspace and
-- id. Without this index they were found through experiments_trash, every
-- live experiment of the database, to keep one workspace's.
CREATE INDEX experiments_workspace ON experiments (workspace_id, id);

-- +goose Down
DROP INDEX experiments_workspace;
