-- +goose Up
-- An API token may expire: expires_at is when it stops working (chosen
-- when it is made: 30 days, 90 days or a year); NULL never expires, as
-- every token made before this migration keeps doing.
ALTER TABLE api_tokens ADD COLUMN expires_at DATETIME;

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN expires_at;
