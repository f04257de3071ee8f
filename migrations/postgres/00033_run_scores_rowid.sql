-- +goose Up
-- Kept in step with SQLite's 00033, which drops AUTOINCREMENT from
-- run_scores (a WAL frame fewer in every stored answer's commit).
-- PostgreSQL's BIGSERIAL has no such cost: nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
