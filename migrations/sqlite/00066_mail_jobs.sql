-- +goose Up
-- Why the last attempt at mailing an invite's link failed ('' when it was
-- delivered, is not mailed, or no attempt failed yet): Members shows it, so
-- the owner can hand the link over instead.
ALTER TABLE invites ADD COLUMN mail_problem TEXT NOT NULL DEFAULT '';
-- The owner was shown the link instead (Members' "Show the link instead"):
-- a mail still being retried is not sent, since it would replace the
-- link's token and end the link the owner handed over.
ALTER TABLE invites ADD COLUMN mail_stopped BOOLEAN NOT NULL DEFAULT 0;

-- A reset link the account's holder asked for on the sign-in page ("Forgot
-- password?"): mailed to the account's confirmed address, so no issuing
-- owner is checked.
ALTER TABLE password_resets ADD COLUMN by_self BOOLEAN NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE password_resets DROP COLUMN by_self;
ALTER TABLE invites DROP COLUMN mail_stopped;
ALTER TABLE invites DROP COLUMN mail_problem;
