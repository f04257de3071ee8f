-- +goose Up
-- Lifecycle: archive (hidden from default lists, restorable) and a trash
-- kept 30 days. One trash entry per deletion a person asked for; every
-- object it took with it (a project's datasets, a dataset's runs...) points
-- at it through trash_id, so restoring the entry brings back exactly that.
CREATE TABLE trash_entries (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    -- What was deleted: project, dataset, rubric, judge, run or experiment.
    kind TEXT NOT NULL,
    object_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    -- What went with it, as shown on the trash page ("2 datasets, 5 runs").
    detail TEXT NOT NULL DEFAULT '',
    deleted_by_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    deleted_by TEXT NOT NULL DEFAULT '',
    deleted_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX trash_entries_workspace ON trash_entries(workspace_id, deleted_at);

ALTER TABLE projects ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE projects ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX projects_trash ON projects(trash_id);

ALTER TABLE datasets ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE datasets ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX datasets_trash ON datasets(trash_id);

ALTER TABLE rubrics ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE rubrics ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX rubrics_trash ON rubrics(trash_id);

ALTER TABLE judges ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE judges ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX judges_trash ON judges(trash_id);

ALTER TABLE runs ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE runs ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX runs_trash ON runs(trash_id);

ALTER TABLE experiments ADD COLUMN archived_at TIMESTAMPTZ;
-- No ON DELETE action: an entry is removed only after its objects are.
ALTER TABLE experiments ADD COLUMN trash_id BIGINT REFERENCES trash_entries(id);
CREATE INDEX experiments_trash ON experiments(trash_id);

-- +goose Down
DROP INDEX experiments_trash;
ALTER TABLE experiments DROP COLUMN trash_id;
ALTER TABLE experiments DROP COLUMN archived_at;
DROP INDEX runs_trash;
ALTER TABLE runs DROP COLUMN trash_id;
ALTER TABLE runs DROP COLUMN archived_at;
DROP INDEX judges_trash;
ALTER TABLE judges DROP COLUMN trash_id;
ALTER TABLE judges DROP COLUMN archived_at;
DROP INDEX rubrics_trash;
ALTER TABLE rubrics DROP COLUMN trash_id;
ALTER TABLE rubrics DROP COLUMN archived_at;
DROP INDEX datasets_trash;
ALTER TABLE datasets DROP COLUMN trash_id;
ALTER TABLE datasets DROP COLUMN archived_at;
DROP INDEX projects_trash;
ALTER TABLE projects DROP COLUMN trash_id;
ALTER TABLE projects DROP COLUMN archived_at;
DROP TABLE trash_entries;
