-- +goose Up
-- Wrong current passwords typed to change a password, counted per session
-- (session_key: SHA-256 of the session's token) and not per account: a
-- stolen session guessing the password must not pause the owner's own
-- sign-ins, as counting them with failed sign-ins (login_attempts) did. A
-- session that types too many is signed out. A try is stored before its
-- password is checked, so tries sent at the same moment count each other.
CREATE TABLE current_password_tries (
    id BIGSERIAL PRIMARY KEY,
    session_key TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX current_password_tries_session ON current_password_tries(session_key);

-- +goose Down
DROP TABLE current_password_tries;
