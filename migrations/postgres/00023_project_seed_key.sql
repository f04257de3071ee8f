-- +goose Up
-- The demo project is seeded once per workspace: processes starting
-- together on a fresh database (a dashboard and its workers) each looked
-- for it, found none and created it. The key marks the seeded project;
-- the unique index lets one creation win. Other projects have none (NULLs
-- never collide). An existing demo project (the oldest of that name) is
-- marked, so it is not seeded again.
ALTER TABLE projects ADD COLUMN seed_key TEXT;
UPDATE projects SET seed_key = 'demo' WHERE id IN (
    SELECT MIN(id) FROM projects WHERE name = 'Demo: dialogue responses' GROUP BY workspace_id);
CREATE UNIQUE INDEX projects_seed_key ON projects(workspace_id, seed_key);

-- +goose Down
DROP INDEX projects_seed_key;
ALTER TABLE projects DROP COLUMN seed_key;
