-- +goose Up
-- What happened to a run's execution that its counters do not show: a
-- worker lost its lease (it could not renew it, e.g. the database was
-- unreachable for longer than the lease) and who took the run on from
-- there. Shown on the run page and in the API, oldest first.
CREATE TABLE run_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at DATETIME NOT NULL,
    kind TEXT NOT NULL,
    worker TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL DEFAULT ''
);
CREATE INDEX run_events_run ON run_events(run_id, id);

-- +goose Down
DROP TABLE run_events;
