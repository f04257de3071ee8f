-- +goose Up
-- A mail sent again at its owner's request ("Send the confirmation mail
-- again") while its job's attempt was under way: River leaves a running
-- job as it is, so the request is kept here for that attempt, which, if it
-- fails, has its next attempt at once instead of after the retry wait.
-- job_id is the mail job's river_job id (no foreign key: River's table is
-- River's); asked_at lets a request left by an attempt that ended as it
-- was made be dropped a day later. An attempt that starts drops its job's
-- request: it is the mail asked for.
CREATE TABLE mail_resend_requests (
    job_id BIGINT PRIMARY KEY,
    asked_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE mail_resend_requests;
