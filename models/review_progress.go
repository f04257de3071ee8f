package models

import (
	"context"
	"fmt"
)

// TeamRatedBound is the most samples TeamRatedSamples counts: the review
// queue shows its team's progress on every page view, and past this many
// rated samples "100,000 or more" says as much as the exact count would,
// for a count that stops reading there.
const TeamRatedBound = 100000

// TeamRatedSamples counts the samples of a dataset that hold, on a
// criterion's scale (lo to hi), at least one current rating that counts:
// a reviewer's latest review of the sample on that scale holds a rating
// (ListReviewerRatedRows' rule, for any reviewer), and no owner excluded
// the reviewer's ratings (RatingExclusion). It stops at limit (at most
// TeamRatedBound), so a count equal to limit means "limit or more". It is
// one statement: no id leaves the database.
func (db *DB) TeamRatedSamples(ctx context.Context, wsID, datasetID int64, criterion string, lo, hi float64, limit int) (int, error) {
	if limit <= 0 || limit > TeamRatedBound {
		limit = TeamRatedBound
	}
	// Led by review_ratings_sample (dataset, criterion, row, ...): the
	// criterion's reviews in sample order, each checked against the later
	// reviews of its own sample only.
	q := "SELECT COUNT(*) FROM (SELECT DISTINCT r.row_id FROM review_ratings r" +
		" WHERE r.dataset_id = ? AND r.criterion = ? AND r.workspace_id = ? AND r.lo = ? AND r.hi = ? AND r.score IS NOT NULL" +
		" AND NOT EXISTS (SELECT 1 FROM review_ratings l WHERE l.dataset_id = r.dataset_id AND l.criterion = r.criterion" +
		" AND l.row_id = r.row_id AND l.workspace_id = r.workspace_id AND l.lo = r.lo AND l.hi = r.hi AND l.id > r.id" +
		" AND ((r.user_id IS NOT NULL AND l.user_id = r.user_id) OR (r.user_id IS NULL AND l.user_id IS NULL AND l.reviewer = r.reviewer)))" +
		" AND NOT EXISTS (SELECT 1 FROM rating_exclusions e WHERE e.workspace_id = r.workspace_id AND e.user_id = r.user_id)" +
		" LIMIT ?) rated"
	var n int64
	if err := db.Reader(ctx).Raw(q, datasetID, criterion, wsID, lo, hi, limit).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("count the samples of dataset %d rated on %s: %w", datasetID, criterion, err)
	}
	return int(n), nil
}
