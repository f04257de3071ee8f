-- +goose Up
-- A row each time a membership ends: an owner removed the member, the
-- member left (removed themselves), or the operator released the account's
-- address (which takes it out of every workspace). Keyed by the account,
-- not its address, so a removal is still known after the person changes
-- their address, and written in the transaction that ends the membership,
-- whether or not an audit entry is written with it. Who removed them is
-- kept as shown then (removed_by; removed_by_user_id goes NULL when that
-- account is gone). A row is ignored while the account is a member of the
-- workspace again (models.RemovalFrom); the rows stay as history.
CREATE TABLE workspace_removals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    removed_by_user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
    removed_by TEXT NOT NULL DEFAULT '',
    how TEXT NOT NULL CHECK (how IN ('removed', 'left', 'released')),
    created_at DATETIME NOT NULL
);
CREATE INDEX workspace_removals_user ON workspace_removals(user_id, workspace_id, id);

-- The removals made before this table, as the audit logs recorded them
-- (by the address at the time): those of an account made before the entry
-- (not a later account that took the address) that is not a member again.
INSERT INTO workspace_removals (workspace_id, user_id, removed_by_user_id, removed_by, how, created_at)
SELECT a.workspace_id, u.id, a.actor_user_id, a.actor,
       CASE WHEN a.actor_user_id = u.id THEN 'left' ELSE 'removed' END, a.created_at
FROM audit_events a JOIN users u ON u.email = a.target
WHERE a.action = 'member-removed' AND u.created_at <= a.created_at
  AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.workspace_id = a.workspace_id AND m.user_id = u.id)
ORDER BY a.id;

-- +goose Down
DROP TABLE workspace_removals;
