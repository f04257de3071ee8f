-- +goose Up
-- Why a judge call failed, as the judge client classified it (network,
-- timeout, auth, server, rate_limited...; see evaluator/judge.ErrorKind),
-- so the run page can name the cause and count "no answer" apart from
-- "unreadable answer" without reading error text. Empty for calls that
-- did not fail and for calls stored before this column existed.
ALTER TABLE run_batches ADD COLUMN error_kind TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE run_batches DROP COLUMN error_kind;
