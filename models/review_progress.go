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
	// Each reviewer's latest review of each sample on the scale is the
	// largest id of its group (a reviewer grouped by the account, else by
	// the name typed), as listCurrentRatings picks it: one pass over the
	// criterion's reviews and a sort in the database. An anti-join that
	// looked, for each review, for a later one of the same reviewer and
	// sample cost more (31 ms against 21 ms for 3,400 reviews, separate
	// runs on a loaded machine; BENCHMARKS.md, reviewstats49), and
	// SQLite took its later-id condition as a range of
	// review_ratings_dataset, reading every later review of the dataset
	// for each review (3.7 s for 3,400 reviews).
	q := "SELECT COUNT(*) FROM (SELECT DISTINCT r.row_id FROM review_ratings r WHERE r.id IN (" +
		"SELECT MAX(m.id) FROM review_ratings m WHERE m.workspace_id = ? AND m.dataset_id = ? AND m.criterion = ? AND m.lo = ? AND m.hi = ?" +
		" GROUP BY m.row_id, m.user_id, CASE WHEN m.user_id IS NULL THEN m.reviewer END)" +
		" AND r.score IS NOT NULL" +
		" AND NOT EXISTS (SELECT 1 FROM rating_exclusions e WHERE e.workspace_id = r.workspace_id AND e.user_id = r.user_id)" +
		" LIMIT ?) rated"
	var n int64
	if err := db.Reader(ctx).Raw(q, wsID, datasetID, criterion, lo, hi, limit).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("count the samples of dataset %d rated on %s: %w", datasetID, criterion, err)
	}
	return int(n), nil
}
