-- +goose Up
-- An invite answered, without signing in, with an address that already has
-- an account is kept for that account (claimed_by) instead of being refused
-- with "this address has an account": the answer to the invite form must
-- not tell the holder of a link which addresses have accounts. The owner of
-- the address joins by signing in and opening the link again; nobody else
-- can use it any more. Joining still sets used_at and used_by.
ALTER TABLE invites ADD COLUMN claimed_by BIGINT REFERENCES users(id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE invites DROP COLUMN claimed_by;
