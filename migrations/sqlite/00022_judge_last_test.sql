-- +goose Up
-- The outcome of the judge's last "Test connection": when it ran (NULL:
-- never tested) and, when it failed, the error in a line ('' when it
-- answered). The launch form warns, without refusing, when the chosen
-- judge's last test failed.
ALTER TABLE judges ADD COLUMN last_test_at DATETIME;
ALTER TABLE judges ADD COLUMN last_test_error TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE judges DROP COLUMN last_test_error;
ALTER TABLE judges DROP COLUMN last_test_at;
