-- +goose Up
-- Requests of the JSON API counted per token and per minute (fixed
-- windows): minute is the minute's number since 1970 (Unix seconds / 60),
-- bucket what is counted ("requests", or "launches" of runs and
-- experiments). Counted in the database, so several server processes on
-- one database keep one limit; each request adds one with an upsert that
-- answers the new count (hits). A token's past windows are deleted when it opens
-- a new one.
CREATE TABLE api_rate_windows (
    token_id BIGINT NOT NULL,
    bucket TEXT NOT NULL,
    minute BIGINT NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (token_id, bucket, minute)
);

-- +goose Down
DROP TABLE api_rate_windows;
