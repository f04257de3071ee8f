-- +goose Up
-- A purge deletes a large run's or dataset's rows a chunk at a time, each
-- chunk its own transaction, so that other writers do not wait behind it
-- (models.Purge). purging_at marks an entry whose purge has begun: it can
-- no longer be restored, and the trash sweep finishes a purge cut short.
ALTER TABLE trash_entries ADD COLUMN purging_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE trash_entries DROP COLUMN purging_at;
