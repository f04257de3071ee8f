-- +goose Up
-- Accounts: people, their roles in workspaces, one-time links, sessions,
-- sign-in attempts (for rate limiting) and the per-workspace audit log.
CREATE TABLE users (
    id BIGSERIAL PRIMARY KEY,
    -- Stored lower-cased: one person, one address, whatever the case typed.
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- PHC string: $argon2id$v=19$m=...,t=...,p=...$salt$hash
    password_hash TEXT NOT NULL,
    -- Bumped when the password changes; sessions that carry an older value
    -- are signed out.
    session_epoch BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE memberships (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships(user_id);

-- One row, written in the transaction that creates the first account: a
-- second concurrent setup fails on the primary key instead of making a
-- second owner.
CREATE TABLE instance_setup (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    done_at TIMESTAMPTZ NOT NULL
);

-- Single-use links. Only a SHA-256 of the token is stored: the link is
-- shown once to the owner who made it.
CREATE TABLE invites (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ,
    used_by BIGINT REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX invites_workspace ON invites(workspace_id);

CREATE TABLE password_resets (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);

-- The session library's store (tokens stored hashed by the library).
CREATE TABLE sessions (
    token TEXT PRIMARY KEY,
    data BYTEA NOT NULL,
    expiry TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_expiry ON sessions(expiry);

-- Every sign-in attempt: the rate limiter counts recent failures per
-- account and per address, across all server processes.
CREATE TABLE login_attempts (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL,
    address TEXT NOT NULL,
    succeeded BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX login_attempts_email ON login_attempts(email, created_at);
CREATE INDEX login_attempts_address ON login_attempts(address, created_at);

CREATE TABLE audit_events (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    actor_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    -- Who acted, as shown (kept when the account is gone).
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    address TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_events_workspace ON audit_events(workspace_id, id);

-- +goose Down
DROP TABLE audit_events;
DROP TABLE login_attempts;
DROP TABLE sessions;
DROP TABLE password_resets;
DROP TABLE invites;
DROP TABLE instance_setup;
DROP TABLE memberships;
DROP TABLE users;
