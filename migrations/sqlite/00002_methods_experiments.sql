-- +goose Up
-- Experiments group runs on the same dataset and rubric for comparison.
CREATE TABLE experiments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    rubric_id INTEGER REFERENCES rubrics(id) ON DELETE SET NULL,
    name TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX experiments_project ON experiments(project_id);

ALTER TABLE runs ADD COLUMN method_settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN experiment_id INTEGER REFERENCES experiments(id) ON DELETE SET NULL;
-- A run derived from another (robustness or repeatability experiment).
ALTER TABLE runs ADD COLUMN parent_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL;
ALTER TABLE runs ADD COLUMN variant TEXT NOT NULL DEFAULT '';
-- Method-specific detail of a call: G-Eval probabilities and their source,
-- sampled ratings, LLM-Eval structured output use.
ALTER TABLE run_batches ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
-- A dataset derived from another (the noise experiment's perturbed copy).
ALTER TABLE datasets ADD COLUMN parent_dataset_id INTEGER REFERENCES datasets(id) ON DELETE SET NULL;
ALTER TABLE datasets ADD COLUMN group_column TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE datasets DROP COLUMN group_column;
ALTER TABLE datasets DROP COLUMN parent_dataset_id;
ALTER TABLE run_batches DROP COLUMN details;
ALTER TABLE runs DROP COLUMN variant;
ALTER TABLE runs DROP COLUMN parent_run_id;
ALTER TABLE runs DROP COLUMN experiment_id;
ALTER TABLE runs DROP COLUMN method_settings;
DROP TABLE experiments;
