-- +goose Up
-- Idempotency keys of API launches (POST .../runs and .../experiments with
-- an Idempotency-Key header): a script that retries a launch after losing
-- the answer gets the run or experiment it already started instead of a
-- second paid one. A key belongs to one caller in one workspace (principal:
-- "token:ID", "user:ID" or "local"); body_hash is the SHA-256 of the
-- request's method, path and body, so the same key with another request is
-- refused. The row is written in the transaction that creates the run or
-- experiment, and the unique index lets one of two racing launches win.
-- Keys expire (expires_at, 24 hours after the launch).
CREATE TABLE launch_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    principal TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,
    experiment_id INTEGER REFERENCES experiments(id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX launch_keys_key ON launch_keys(workspace_id, principal, idempotency_key);
CREATE INDEX launch_keys_expiry ON launch_keys(expires_at);

-- +goose Down
DROP TABLE launch_keys;
