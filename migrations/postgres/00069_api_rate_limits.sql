-- +goose Up
-- The JSON API's rate limits kept as a generic cell rate (GCRA) per token
-- and bucket ("requests", or "launches" of runs and experiments), in
-- place of per-minute counts (api_rate_windows, 00067), whose fixed
-- windows let a token send twice its limit across the turn of a minute.
-- tat_us is the theoretical arrival time in microseconds since 1970:
-- a request is let through when tat_us is at most one minute less one
-- request's share ahead of now, and then moves it on by that share. One
-- row per token and bucket, changed by one upsert per request; allowed
-- says whether the last request was let through, seen_us when it came.
CREATE TABLE api_rate_limits (
    token_id BIGINT NOT NULL,
    bucket TEXT NOT NULL,
    tat_us BIGINT NOT NULL,
    seen_us BIGINT NOT NULL,
    allowed INTEGER NOT NULL,
    PRIMARY KEY (token_id, bucket)
);
DROP TABLE api_rate_windows;

-- +goose Down
DROP TABLE api_rate_limits;
CREATE TABLE api_rate_windows (
    token_id BIGINT NOT NULL,
    bucket TEXT NOT NULL,
    minute BIGINT NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (token_id, bucket, minute)
);
