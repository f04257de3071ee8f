-- +goose Up
-- What a finished run's results page shows apart from its table of samples
-- (every figure of every criterion, the scatter's drawn points), encoded by
-- the report package. variant names the page options it was computed with
-- (group and system column); input_key is the hash of everything it depends
-- on (the run as finished, the human ratings chosen, the options, the
-- report's version): a row whose key differs is computed again, never served.
CREATE TABLE run_summaries (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    variant TEXT NOT NULL,
    input_key TEXT NOT NULL,
    summary TEXT NOT NULL,
    computed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, variant)
);

-- Which inputs a run's rows in run_sample_results were computed from.
CREATE TABLE run_sample_sets (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    input_key TEXT NOT NULL,
    samples INTEGER NOT NULL,
    computed_at TIMESTAMPTZ NOT NULL
);

-- One sample's final result on one criterion of a finished run, with its
-- place in every order the results page sorts by (rank_*: 0-based, missing
-- values last, ties in dataset order), so a page of the table is a range of
-- one index.
CREATE TABLE run_sample_results (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    criterion_index INTEGER NOT NULL,
    row_id BIGINT NOT NULL,
    position INTEGER NOT NULL,
    final DOUBLE PRECISION,
    human DOUBLE PRECISION,
    abs_diff DOUBLE PRECISION,
    missing INTEGER NOT NULL,
    rounds TEXT NOT NULL,
    rank_position INTEGER NOT NULL,
    rank_score_asc INTEGER NOT NULL,
    rank_score_desc INTEGER NOT NULL,
    rank_human_asc INTEGER NOT NULL,
    rank_human_desc INTEGER NOT NULL,
    rank_diff_asc INTEGER NOT NULL,
    rank_diff_desc INTEGER NOT NULL,
    rank_missing_asc INTEGER NOT NULL,
    rank_missing_desc INTEGER NOT NULL,
    PRIMARY KEY (run_id, criterion_index, row_id)
);
CREATE INDEX run_sample_results_position ON run_sample_results (run_id, criterion_index, rank_position);
CREATE INDEX run_sample_results_score_asc ON run_sample_results (run_id, criterion_index, rank_score_asc);
CREATE INDEX run_sample_results_score_desc ON run_sample_results (run_id, criterion_index, rank_score_desc);
CREATE INDEX run_sample_results_human_asc ON run_sample_results (run_id, criterion_index, rank_human_asc);
CREATE INDEX run_sample_results_human_desc ON run_sample_results (run_id, criterion_index, rank_human_desc);
CREATE INDEX run_sample_results_diff_asc ON run_sample_results (run_id, criterion_index, rank_diff_asc);
CREATE INDEX run_sample_results_diff_desc ON run_sample_results (run_id, criterion_index, rank_diff_desc);
CREATE INDEX run_sample_results_missing_asc ON run_sample_results (run_id, criterion_index, rank_missing_asc);
CREATE INDEX run_sample_results_missing_desc ON run_sample_results (run_id, criterion_index, rank_missing_desc);

-- +goose Down
DROP TABLE run_sample_results;
DROP TABLE run_sample_sets;
DROP TABLE run_summaries;
