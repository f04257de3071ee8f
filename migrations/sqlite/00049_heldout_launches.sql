-- +goose Up
-- The launch of an alignment's held-out runs under way, or how the last
-- one ended, in the database rather than in one server process's memory:
-- every process sharing the database says "Preparing the held-out runs"
-- while any of them prepares, a second launch is refused instead of making
-- a second copy, and a launch whose process ended (a crash, a restart) is
-- seen to have stopped when its lease lapses. owner is the launch's own
-- random token; lease_until is NULL once it ended (failed says why when it
-- failed, '' when the runs were launched). Times are the database's clock.
CREATE TABLE heldout_launches (
    alignment_id INTEGER PRIMARY KEY REFERENCES alignments(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    started_at DATETIME NOT NULL,
    lease_until DATETIME,
    ended_at DATETIME,
    failed TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE heldout_launches;
