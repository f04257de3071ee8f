-- +goose Up
-- Two indexes of a run's failed calls: by cause (the counts, one cause's
-- list) and in run order (every failed call). The list of a run's calls
-- counts its failures by cause on every page and filters them, which read
-- every call of the run from its table row to see its status (a
-- million-sample run has 200,000, each with its prompt). They hold failed
-- calls only, so the runner's writes of the calls that succeed never touch
-- them. Queries say status = 'failed' as a literal for a planner to use them.
CREATE INDEX run_batches_failed ON run_batches (run_id, error_kind, criterion_index, round, batch_index) WHERE status = 'failed';
CREATE INDEX run_batches_failed_order ON run_batches (run_id, criterion_index, round, batch_index) WHERE status = 'failed';

-- +goose Down
DROP INDEX run_batches_failed_order;
DROP INDEX run_batches_failed;
