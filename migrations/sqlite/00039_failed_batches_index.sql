-- +goose Up
-- A run's failed calls: the list of a run's calls
-- counts its failures by cause on every page and filters them, which read
-- the status of every call of the run from its table row (a million-sample
-- run has 200,000, each with its prompt). Only failed calls are in it, so
-- the runner's writes of the calls that succeed do not touch them: by
-- cause (the counts, one cause's list) and in run order (every failed call).
-- Queries must say status = 'failed' as a literal for a planner to use them.
CREATE INDEX run_batches_failed ON run_batches (run_id, error_kind, criterion_index, round, batch_index) WHERE status = 'failed';
CREATE INDEX run_batches_failed_order ON run_batches (run_id, criterion_index, round, batch_index) WHERE status = 'failed';

-- +goose Down
DROP INDEX run_batches_failed_order;
DROP INDEX run_batches_failed;
