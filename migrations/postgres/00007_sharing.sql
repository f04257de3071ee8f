-- +goose Up
-- Read-only share links to one report (a run, an experiment, or a
-- comparison of two runs), and one optional webhook per workspace.
CREATE TABLE share_links (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('run', 'experiment', 'compare')),
    -- run: run_id; compare: run_id and other_run_id; experiment: experiment_id.
    run_id BIGINT REFERENCES runs(id) ON DELETE CASCADE,
    other_run_id BIGINT REFERENCES runs(id) ON DELETE CASCADE,
    experiment_id BIGINT REFERENCES experiments(id) ON DELETE CASCADE,
    -- Only a SHA-256 of the token is stored: the link is shown once.
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL DEFAULT '',
    created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
    -- Who made it as shown at the time (kept when the account is gone).
    created_by_name TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ,
    last_opened_at TIMESTAMPTZ
);
CREATE INDEX share_links_workspace ON share_links(workspace_id, id);

CREATE TABLE webhooks (
    workspace_id BIGINT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- The dashboard's address as people reach it, for the run link.
    base_url TEXT NOT NULL DEFAULT '',
    on_finished BOOLEAN NOT NULL DEFAULT TRUE,
    on_failed BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at TIMESTAMPTZ NOT NULL,
    last_status TEXT NOT NULL DEFAULT '',
    last_sent_at TIMESTAMPTZ
);

-- +goose Down
DROP TABLE webhooks;
DROP TABLE share_links;
