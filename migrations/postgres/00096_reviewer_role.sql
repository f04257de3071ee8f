-- +goose Up
-- A reviewer role between viewer and editor: a viewer who may also rate
-- samples (save, edit and withdraw their own reviews) and nothing else an
-- editor may do (launch paid runs, change judges or keys, delete). Only
-- the two tables with a role column change: their CHECK admits the new
-- name.
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'editor', 'reviewer', 'viewer'));
ALTER TABLE invites DROP CONSTRAINT invites_role_check;
ALTER TABLE invites ADD CONSTRAINT invites_role_check CHECK (role IN ('owner', 'editor', 'reviewer', 'viewer'));

-- +goose Down
-- A schema without the role has no place for reviewers: they become
-- viewers (they keep reading and lose rating), never editors (which would
-- give them launches and deletions they never had). Invites likewise.
UPDATE memberships SET role = 'viewer' WHERE role = 'reviewer';
UPDATE invites SET role = 'viewer' WHERE role = 'reviewer';
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'editor', 'viewer'));
ALTER TABLE invites DROP CONSTRAINT invites_role_check;
ALTER TABLE invites ADD CONSTRAINT invites_role_check CHECK (role IN ('owner', 'editor', 'viewer'));
