-- +goose Up
-- paid_calls names the paid judge calls of a batch's stored answer: the
-- identities (space-separated) the answer cache gave them when the judge
-- answered. An answer refused because its batch was answered first is
-- counted on the run except for the calls the stored answer already
-- counted (the same identities: an answer replayed from the cache). NULL
-- for answers stored before this column existed (they are compared by
-- content instead).
ALTER TABLE run_batches ADD COLUMN paid_calls TEXT;

-- +goose Down
ALTER TABLE run_batches DROP COLUMN paid_calls;
