-- +goose Up
-- A reviewer role between viewer and editor: a viewer who may also rate
-- samples (save, edit and withdraw their own reviews) and nothing else an
-- editor may do (launch paid runs, change judges or keys, delete). The
-- two tables with a role column, memberships and invites, admit the new
-- name in their CHECK. SQLite cannot change a CHECK in place, so each is
-- copied into a new table (ids, every column, the indexes and foreign
-- keys kept; sqlite_sequence carried over, so a deleted row's id is never
-- handed out again: mailed_tokens names invites by id).
--
-- email_confirmations.invite_id references invites ON DELETE CASCADE, and
-- foreign keys are on inside the migration's transaction, so dropping the
-- old invites table would delete every pending confirmation of an invite.
-- Those references are set aside (migration_00096_confirmation_invites),
-- cleared for the drop, and put back once the new table has the name.
CREATE TABLE memberships_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'reviewer', 'viewer')),
    created_at DATETIME NOT NULL,
    UNIQUE (workspace_id, user_id)
);
INSERT INTO memberships_new (id, workspace_id, user_id, role, created_at)
    SELECT id, workspace_id, user_id, role, created_at FROM memberships;
DELETE FROM sqlite_sequence WHERE name = 'memberships_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'memberships_new', seq FROM sqlite_sequence WHERE name = 'memberships';
DROP TABLE memberships;
ALTER TABLE memberships_new RENAME TO memberships;
CREATE INDEX memberships_user ON memberships(user_id);

CREATE TABLE invites_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'reviewer', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at DATETIME,
    used_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    claimed_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    email TEXT NOT NULL DEFAULT '',
    mail_problem TEXT NOT NULL DEFAULT '',
    mail_stopped BOOLEAN NOT NULL DEFAULT 0
);
INSERT INTO invites_new (id, workspace_id, role, token_hash, created_by, created_at, expires_at, used_at, used_by,
        claimed_by, email, mail_problem, mail_stopped)
    SELECT id, workspace_id, role, token_hash, created_by, created_at, expires_at, used_at, used_by,
        claimed_by, email, mail_problem, mail_stopped FROM invites;
DELETE FROM sqlite_sequence WHERE name = 'invites_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'invites_new', seq FROM sqlite_sequence WHERE name = 'invites';
CREATE TABLE migration_00096_confirmation_invites (id INTEGER PRIMARY KEY, invite_id INTEGER NOT NULL);
INSERT INTO migration_00096_confirmation_invites (id, invite_id)
    SELECT id, invite_id FROM email_confirmations WHERE invite_id IS NOT NULL;
UPDATE email_confirmations SET invite_id = NULL WHERE invite_id IS NOT NULL;
DROP TABLE invites;
ALTER TABLE invites_new RENAME TO invites;
CREATE INDEX invites_workspace ON invites(workspace_id);
UPDATE email_confirmations SET invite_id = (SELECT k.invite_id FROM migration_00096_confirmation_invites k WHERE k.id = email_confirmations.id)
    WHERE id IN (SELECT id FROM migration_00096_confirmation_invites);
DROP TABLE migration_00096_confirmation_invites;

-- +goose Down
-- A schema without the role has no place for reviewers: they become
-- viewers (they keep reading and lose rating), never editors (which would
-- give them launches and deletions they never had). Invites likewise.
-- The same copy as above, with the narrower CHECK.
CREATE TABLE memberships_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at DATETIME NOT NULL,
    UNIQUE (workspace_id, user_id)
);
INSERT INTO memberships_new (id, workspace_id, user_id, role, created_at)
    SELECT id, workspace_id, user_id, CASE role WHEN 'reviewer' THEN 'viewer' ELSE role END, created_at FROM memberships;
DELETE FROM sqlite_sequence WHERE name = 'memberships_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'memberships_new', seq FROM sqlite_sequence WHERE name = 'memberships';
DROP TABLE memberships;
ALTER TABLE memberships_new RENAME TO memberships;
CREATE INDEX memberships_user ON memberships(user_id);

CREATE TABLE invites_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at DATETIME,
    used_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    claimed_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    email TEXT NOT NULL DEFAULT '',
    mail_problem TEXT NOT NULL DEFAULT '',
    mail_stopped BOOLEAN NOT NULL DEFAULT 0
);
INSERT INTO invites_new (id, workspace_id, role, token_hash, created_by, created_at, expires_at, used_at, used_by,
        claimed_by, email, mail_problem, mail_stopped)
    SELECT id, workspace_id, CASE role WHEN 'reviewer' THEN 'viewer' ELSE role END, token_hash, created_by, created_at, expires_at, used_at, used_by,
        claimed_by, email, mail_problem, mail_stopped FROM invites;
DELETE FROM sqlite_sequence WHERE name = 'invites_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'invites_new', seq FROM sqlite_sequence WHERE name = 'invites';
CREATE TABLE migration_00096_confirmation_invites (id INTEGER PRIMARY KEY, invite_id INTEGER NOT NULL);
INSERT INTO migration_00096_confirmation_invites (id, invite_id)
    SELECT id, invite_id FROM email_confirmations WHERE invite_id IS NOT NULL;
UPDATE email_confirmations SET invite_id = NULL WHERE invite_id IS NOT NULL;
DROP TABLE invites;
ALTER TABLE invites_new RENAME TO invites;
CREATE INDEX invites_workspace ON invites(workspace_id);
UPDATE email_confirmations SET invite_id = (SELECT k.invite_id FROM migration_00096_confirmation_invites k WHERE k.id = email_confirmations.id)
    WHERE id IN (SELECT id FROM migration_00096_confirmation_invites);
DROP TABLE migration_00096_confirmation_invites;
