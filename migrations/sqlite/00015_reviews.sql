-- +goose Up
-- Ratings and reviews made in the browser (issue 10). Every submission is a
-- new row, so each rating is kept with who made it and when; a reviewer's
-- current rating of a sample is their latest row. A report reads the rows
-- made up to the moment its reader last asked it to recompute
-- (run_human_sources.as_of), so new ratings never change it silently.
CREATE TABLE review_ratings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    row_id INTEGER NOT NULL REFERENCES dataset_rows(id) ON DELETE CASCADE,
    -- The rubric criterion's name (ratings are on its scale, lo..hi).
    criterion TEXT NOT NULL,
    -- The criterion's human-rating column in the rubric the reviewer rated
    -- with ('' when it had none): the export names the reviewer's column
    -- after it, so a re-import finds it as an annotator of that column.
    human_column TEXT NOT NULL DEFAULT '',
    reviewer TEXT NOT NULL,
    user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
    -- The run whose judge was being reviewed, when there was one.
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    score REAL,
    lo REAL NOT NULL,
    hi REAL NOT NULL,
    -- 1 agrees with the judge's analysis, 0 disagrees, NULL did not say.
    agree BOOLEAN,
    reason TEXT NOT NULL DEFAULT '',
    comment TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    created_at DATETIME NOT NULL
);
CREATE INDEX review_ratings_sample ON review_ratings(dataset_id, criterion, row_id, reviewer, id);

-- Which human ratings a run's report uses: 'imported', 'browser' or 'both',
-- and the browser ratings made up to as_of. No row means 'imported'.
CREATE TABLE run_human_sources (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    as_of DATETIME NOT NULL,
    -- The browser ratings read are those with an id up to this one (ids only
    -- grow, unlike clocks); as_of says when that was, for the reader.
    upto_rating_id INTEGER NOT NULL DEFAULT 0,
    chosen_by TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE run_human_sources;
DROP TABLE review_ratings;
