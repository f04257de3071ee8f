-- +goose Up
-- The run that paid for each cached judge answer, so that deleting a run
-- for good (a purge of the trash) deletes the judge's answers about its
-- samples too: an answer often quotes or paraphrases the text it judged.
-- Answers cached before this column have none and stay until their
-- workspace is deleted. The index holds only answers with a run: the
-- purge finds a run's answers through it, and the runner's inserts append
-- to its end (one run's answers in a row).
ALTER TABLE judge_response_cache ADD COLUMN run_id INTEGER;
CREATE INDEX judge_response_cache_run ON judge_response_cache (run_id) WHERE run_id IS NOT NULL;

-- +goose Down
DROP INDEX judge_response_cache_run;
ALTER TABLE judge_response_cache DROP COLUMN run_id;
