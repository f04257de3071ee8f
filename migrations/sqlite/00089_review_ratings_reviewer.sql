-- +goose Up
-- The review queue counts and finds one reviewer's own ratings of one
-- criterion (ListReviewerRatedRows): an account's by its user id, a name
-- typed without an account by that name (user_id NULL). Led by dataset and
-- criterion, then the reviewer, so the queue reads that reviewer's reviews
-- of the criterion and no one else's, however many reviews the team made.
CREATE INDEX review_ratings_reviewer ON review_ratings(dataset_id, criterion, user_id, reviewer, row_id, id);

-- +goose Down
DROP INDEX review_ratings_reviewer;
