-- +goose Up
-- The tokens of a link that a mail job sent before its last attempt (only
-- their SHA-256): an attempt whose reply from the SMTP server was lost may
-- have delivered its mail all the same, so each link mailed keeps working
-- beside the next attempt's (the link row's token_hash), until the link is
-- used, ends, or its owner is shown a new one. kind is invite, reset or
-- confirm; link_id the row of invites, password_resets or
-- email_confirmations.
CREATE TABLE mailed_tokens (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    link_id BIGINT NOT NULL,
    token_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX idx_mailed_tokens_hash ON mailed_tokens (kind, token_hash);
CREATE INDEX idx_mailed_tokens_link ON mailed_tokens (kind, link_id);

-- Why the last attempt at mailing a reset or confirmation link failed (''
-- when it was delivered or no attempt failed yet), as invites.mail_problem:
-- the account's page, Members and `admin list-users` show it.
ALTER TABLE password_resets ADD COLUMN mail_problem TEXT NOT NULL DEFAULT '';
ALTER TABLE email_confirmations ADD COLUMN mail_problem TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE email_confirmations DROP COLUMN mail_problem;
ALTER TABLE password_resets DROP COLUMN mail_problem;
DROP TABLE mailed_tokens;
