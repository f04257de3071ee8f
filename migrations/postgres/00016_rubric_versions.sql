-- +goose Up
-- Rubric versions: every saved change of a rubric's task, fields or
-- criteria is kept as a numbered version, and a run records the version
-- it was launched with. rubrics.version is the current one.
ALTER TABLE rubrics ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

CREATE TABLE rubric_versions (
    id BIGSERIAL PRIMARY KEY,
    rubric_id BIGINT NOT NULL REFERENCES rubrics(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    task TEXT NOT NULL DEFAULT '',
    fields TEXT NOT NULL DEFAULT '[]',
    -- Criteria with their level descriptions and labelled examples.
    criteria TEXT NOT NULL DEFAULT '[]',
    -- Why this version exists ("created", "edited", "accepted from alignment 3").
    note TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (rubric_id, version)
);

-- Every rubric that exists today becomes its own version 1.
INSERT INTO rubric_versions (rubric_id, version, task, fields, criteria, note, created_at)
SELECT id, 1, task, fields, criteria, 'created', updated_at FROM rubrics;

-- NULL for runs launched before versions were kept, or with a rubric
-- that was never stored (a reworded variant, the command line).
ALTER TABLE runs ADD COLUMN rubric_version INTEGER;
CREATE INDEX runs_rubric ON runs(rubric_id);

-- An alignment: drafting a better rubric version from the samples where
-- the humans disagree with the judge most, and proving it on held-out samples.
CREATE TABLE alignments (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    rubric_id BIGINT NOT NULL REFERENCES rubrics(id) ON DELETE CASCADE,
    source_run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    calibration_row_ids TEXT NOT NULL DEFAULT '[]',
    held_out_row_ids TEXT NOT NULL DEFAULT '[]',
    base_version INTEGER NOT NULL,
    draft TEXT NOT NULL DEFAULT '{}',
    draft_source TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    new_version INTEGER,
    held_out_dataset_id BIGINT REFERENCES datasets(id) ON DELETE SET NULL,
    before_run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
    after_run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
    created_at TIMESTAMPTZ NOT NULL,
    accepted_at TIMESTAMPTZ
);
CREATE INDEX alignments_rubric ON alignments(rubric_id);

-- +goose Down
DROP TABLE alignments;
DROP INDEX runs_rubric;
ALTER TABLE runs DROP COLUMN rubric_version;
DROP TABLE rubric_versions;
ALTER TABLE rubrics DROP COLUMN version;
