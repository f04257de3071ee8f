-- +goose Up
-- People whose browser ratings an owner left out of the workspace's human
-- ratings (usually a former member whose ratings should not count). Their
-- reviews stay stored and listed, marked; no report, alignment, export or
-- API figure reads their ratings while the row exists. Removing the row
-- counts them again.
CREATE TABLE rating_exclusions (
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- Who excluded them, as the audit log names people.
    excluded_by TEXT NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
-- The members page counts each account's ratings in the workspace, and an
-- exclusion counts one person's. Led by the account, not the workspace: an
-- index led by workspace_id drew SQLite's planner away from
-- review_ratings_sample for the reviews of a page's samples (every review
-- of the workspace read; TestAPIListsReadThroughTheirIndexes).
CREATE INDEX review_ratings_user ON review_ratings(user_id, workspace_id);

-- +goose Down
DROP INDEX review_ratings_user;
DROP TABLE rating_exclusions;
