-- +goose Up
-- What an API token may do in its workspace: 'full' is everything its
-- person's role there allows at the time of each call (every token made
-- before scopes existed); 'read' only reads, whatever the role, so a
-- script that only fetches results cannot launch, change or rename
-- anything, even when its token leaks.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full';

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN scope;
