-- +goose Up
-- The workspaces the server's operator lets reach the private-network and
-- loopback addresses the operator's settings allow (BATCHEVAL_JUDGE_ALLOW_*,
-- BATCHEVAL_WEBHOOK_ALLOW_*), besides the default workspace, which always
-- may. Anyone signed in can make a workspace of their own, so without a row
-- here its judges and webhooks reach public addresses only. Written by
-- `batcheval admin network grant|revoke` (models/netgrant.go), each change
-- also in the workspace's audit log.
CREATE TABLE network_grants (
    workspace_id INTEGER PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    granted_by TEXT NOT NULL DEFAULT '',
    granted_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE network_grants;
