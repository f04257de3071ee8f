-- +goose Up
-- A stored sample result's place in the review queue's order by the spread
-- between its rounds (highest minus lowest readable round, largest first;
-- samples with fewer than two readable rounds last; ties in dataset order),
-- so the queue reads the sample at one place through this index instead of
-- every result of the criterion. NULL for results stored before: the queue
-- orders those as before, from every result, until they are stored again.
ALTER TABLE run_sample_results ADD COLUMN rank_spread_desc INTEGER;
CREATE INDEX run_sample_results_spread_desc ON run_sample_results (run_id, criterion_index, rank_spread_desc);

-- +goose Down
DROP INDEX run_sample_results_spread_desc;
ALTER TABLE run_sample_results DROP COLUMN rank_spread_desc;
