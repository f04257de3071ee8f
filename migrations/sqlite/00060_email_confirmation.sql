-- +goose Up
-- When the account's address was shown to reach its owner: a link mailed to
-- it was opened (email_confirmations). NULL for every account made without
-- mail (setup, the admin command, an invite answered on a server with no
-- SMTP) and after `batcheval admin release-address` renamed the account.
ALTER TABLE users ADD COLUMN email_confirmed_at DATETIME;

-- A reset link issued by the operator (`batcheval admin reset-link`), who
-- may reset any account: it is not checked against an issuing owner.
ALTER TABLE password_resets ADD COLUMN by_operator BOOLEAN NOT NULL DEFAULT 0;

-- The address an invite link was mailed to ('' for a link handed over).
ALTER TABLE invites ADD COLUMN email TEXT NOT NULL DEFAULT '';

-- Links mailed to an address to show that whoever opens them receives its
-- mail: to answer an invite with a new account (invite_id, no user_id yet),
-- or to confirm an existing account's address (user_id). Only the hash of
-- the token is stored.
CREATE TABLE email_confirmations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
    invite_id INTEGER REFERENCES invites(id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at DATETIME
);
CREATE INDEX email_confirmations_invite ON email_confirmations(invite_id);
CREATE INDEX email_confirmations_email ON email_confirmations(email);

-- +goose Down
DROP TABLE email_confirmations;
ALTER TABLE invites DROP COLUMN email;
ALTER TABLE password_resets DROP COLUMN by_operator;
ALTER TABLE users DROP COLUMN email_confirmed_at;
