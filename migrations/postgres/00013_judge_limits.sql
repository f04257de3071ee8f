-- +goose Up
-- Per-judge limits shared by every worker (runner/limits.go): requests and
-- tokens per minute as token buckets, and at most max_concurrency calls in
-- flight at once, as slots leased with an expiry. adaptive_limit is the
-- concurrency currently allowed (AIMD: halved on a 429 or a slow answer,
-- one more after a streak of successes), never above max_concurrency.
-- Times are Unix milliseconds of the workers' clocks.
CREATE TABLE judge_limits (
    judge_id BIGINT PRIMARY KEY REFERENCES judges(id) ON DELETE CASCADE,
    requests_per_minute INTEGER NOT NULL DEFAULT 0,
    tokens_per_minute INTEGER NOT NULL DEFAULT 0,
    max_concurrency INTEGER NOT NULL DEFAULT 0,
    -- A call slower than this (milliseconds) halves adaptive_limit; 0: off.
    slow_ms BIGINT NOT NULL DEFAULT 0,
    adaptive_limit INTEGER NOT NULL DEFAULT 0,
    successes INTEGER NOT NULL DEFAULT 0,
    last_cut_ms BIGINT NOT NULL DEFAULT 0,
    -- Buckets in thousandths of a request and of a token.
    request_milli BIGINT NOT NULL DEFAULT 0,
    token_milli BIGINT NOT NULL DEFAULT 0,
    refilled_ms BIGINT NOT NULL DEFAULT 0,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE judge_slots (
    judge_id BIGINT NOT NULL REFERENCES judges(id) ON DELETE CASCADE,
    slot INTEGER NOT NULL,
    -- Empty when free; otherwise who holds it until expires_ms.
    holder TEXT NOT NULL DEFAULT '',
    expires_ms BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (judge_id, slot)
);

-- +goose Down
DROP TABLE judge_slots;
DROP TABLE judge_limits;
