-- +goose Up
-- Personal access tokens for the JSON API: one person, one workspace. Only
-- a SHA-256 of the token is stored; the token is shown once when made.
CREATE TABLE api_tokens (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    -- The first characters of the token, to tell tokens apart in the list.
    prefix TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX api_tokens_user ON api_tokens(user_id, workspace_id);

-- +goose Down
DROP TABLE api_tokens;
