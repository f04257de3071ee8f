-- +goose Up
-- The size of each pending upload, so a workspace's total can be checked
-- against its quota without reading the files; and an index for the sweeper
-- that deletes expired uploads.
ALTER TABLE pending_uploads ADD COLUMN size_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE pending_uploads SET size_bytes = octet_length(content);
CREATE INDEX pending_uploads_created ON pending_uploads(created_at);
CREATE INDEX pending_uploads_workspace ON pending_uploads(workspace_id);

-- +goose Down
DROP INDEX pending_uploads_workspace;
DROP INDEX pending_uploads_created;
ALTER TABLE pending_uploads DROP COLUMN size_bytes;
