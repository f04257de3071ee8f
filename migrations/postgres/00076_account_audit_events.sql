-- +goose Up
-- The audit log of operator actions (and the account's own) on an account
-- that belongs to no workspace, which has no workspace audit log to hold
-- them: `batcheval admin reset-link` for an account in no workspace, a
-- confirmation or self-service reset of one. An account in workspaces has
-- them in each workspace's audit_events instead. user_id is kept NULL when
-- the account is gone; target names it as it was.
CREATE TABLE account_audit_events (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_account_audit_events_user ON account_audit_events (user_id, id);

-- +goose Down
DROP TABLE account_audit_events;
