-- +goose Up
-- Exact-match judge answer cache, per workspace: an identical request (same
-- judge address, model, request body and seed) made again is answered from
-- here instead of the endpoint. occurrence numbers identical requests within
-- one run (a unit tried again after an unreadable answer sends the same
-- request a second time and must get a fresh answer), so a re-run replays
-- the same sequence.
CREATE TABLE judge_response_cache (
    workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    request_hash TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    response TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, request_hash, occurrence)
);

-- How many of a run's calls were answered from the cache.
ALTER TABLE runs ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;

-- A run's statistics (correlations with bootstrap intervals, system-level
-- figures), computed once and served from here while their inputs (the
-- hash of the scores and ratings they came from) are unchanged.
CREATE TABLE run_stats (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    -- The options the figures depend on (system column).
    variant TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    stats TEXT NOT NULL,
    computed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, criterion_index, variant)
);

-- +goose Down
DROP TABLE run_stats;
ALTER TABLE runs DROP COLUMN cached_calls;
DROP TABLE judge_response_cache;
