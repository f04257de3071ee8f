-- +goose Up
-- Every project belongs to a workspace so accounts and roles can come later
-- without a rewrite; for now there is one default workspace.
CREATE TABLE workspaces (
    id BIGSERIAL PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE projects (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX projects_workspace ON projects(workspace_id);

CREATE TABLE datasets (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    source_filename TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '',
    row_count INTEGER NOT NULL DEFAULT 0,
    id_column TEXT NOT NULL DEFAULT '',
    columns TEXT NOT NULL DEFAULT '[]',
    fields TEXT NOT NULL DEFAULT '[]',
    rating_columns TEXT NOT NULL DEFAULT '[]',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX datasets_project ON datasets(project_id);

CREATE TABLE dataset_rows (
    id BIGSERIAL PRIMARY KEY,
    dataset_id BIGINT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    external_id TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    ratings TEXT NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX dataset_rows_external ON dataset_rows(dataset_id, external_id);
CREATE INDEX dataset_rows_position ON dataset_rows(dataset_id, position);

CREATE TABLE rubrics (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    task TEXT NOT NULL DEFAULT '',
    fields TEXT NOT NULL DEFAULT '[]',
    criteria TEXT NOT NULL DEFAULT '[]',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX rubrics_project ON rubrics(project_id);

CREATE TABLE judges (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    simulated BOOLEAN NOT NULL DEFAULT FALSE,
    base_url TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    api_key_env TEXT NOT NULL DEFAULT '',
    api_key TEXT NOT NULL DEFAULT '',
    temperature DOUBLE PRECISION NOT NULL DEFAULT 0.2,
    top_p DOUBLE PRECISION NOT NULL DEFAULT 0.9,
    max_concurrency INTEGER NOT NULL DEFAULT 4,
    timeout_seconds INTEGER NOT NULL DEFAULT 120,
    price_input_per_m_tok DOUBLE PRECISION,
    price_output_per_m_tok DOUBLE PRECISION,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX judges_workspace ON judges(workspace_id);

CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    dataset_id BIGINT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    rubric_id BIGINT REFERENCES rubrics(id) ON DELETE SET NULL,
    judge_id BIGINT REFERENCES judges(id) ON DELETE SET NULL,
    name TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    rubric_snapshot TEXT NOT NULL DEFAULT '{}',
    judge_snapshot TEXT NOT NULL DEFAULT '{}',
    simulated BOOLEAN NOT NULL DEFAULT FALSE,
    error TEXT NOT NULL DEFAULT '',
    batches_total INTEGER NOT NULL DEFAULT 0,
    batches_done INTEGER NOT NULL DEFAULT 0,
    batches_failed INTEGER NOT NULL DEFAULT 0,
    missing_scores INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION,
    current_criterion INTEGER NOT NULL DEFAULT 0,
    current_round INTEGER NOT NULL DEFAULT 0,
    job_id BIGINT,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until TIMESTAMPTZ,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ
);
CREATE INDEX runs_project ON runs(project_id);
CREATE INDEX runs_status ON runs(status);

CREATE TABLE run_batches (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    round INTEGER NOT NULL,
    batch_index INTEGER NOT NULL,
    row_ids TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    request TEXT NOT NULL DEFAULT '',
    response TEXT NOT NULL DEFAULT '',
    repair_request TEXT NOT NULL DEFAULT '',
    repair_response TEXT NOT NULL DEFAULT '',
    problems TEXT NOT NULL DEFAULT '[]',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    done_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX run_batches_place ON run_batches(run_id, criterion_index, round, batch_index);

CREATE TABLE run_scores (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch_id BIGINT NOT NULL REFERENCES run_batches(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    round INTEGER NOT NULL,
    row_id BIGINT NOT NULL REFERENCES dataset_rows(id) ON DELETE CASCADE,
    label INTEGER NOT NULL,
    score DOUBLE PRECISION,
    analysis TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX run_scores_place ON run_scores(run_id, criterion_index, round, row_id);
CREATE INDEX run_scores_batch ON run_scores(batch_id);

-- An uploaded file waits here between the preview and the person's choice
-- of columns; kept in the database so any server process can finish it.
CREATE TABLE pending_uploads (
    id BIGSERIAL PRIMARY KEY,
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    token TEXT NOT NULL UNIQUE,
    filename TEXT NOT NULL,
    format TEXT NOT NULL,
    content BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE pending_uploads;
DROP TABLE run_scores;
DROP TABLE run_batches;
DROP TABLE runs;
DROP TABLE judges;
DROP TABLE rubrics;
DROP TABLE dataset_rows;
DROP TABLE datasets;
DROP TABLE projects;
DROP TABLE workspaces;
