package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// TeamRatedBound is the most samples TeamRatedSamples counts: the review
// queue shows its team's progress on every page view, and past this many
// rated samples "100,000 or more" says as much as the exact count would,
// for a count that stops reading there.
const TeamRatedBound = 100000

// teamRatedCacheSize bounds the team counts kept in memory: one a
// (dataset, criterion, scale) being reviewed, each a few words; a full
// cache starts again empty.
const teamRatedCacheSize = 1024

// teamRatedKey names a team count: the dataset's criterion on a scale, up
// to a limit.
type teamRatedKey struct {
	wsID, datasetID int64
	criterion       string
	lo, hi          float64
	limit           int
}

// teamRatedCount is a team count and the dataset's review version it was
// counted at.
type teamRatedCount struct {
	version, count int64
}

// teamRatedCache keeps the team counts of a handle (DB.teamRated); the
// zero value is empty and ready.
type teamRatedCache struct {
	mu    sync.Mutex
	items map[teamRatedKey]teamRatedCount
	// counted counts the counts read from the reviews (tests).
	counted int64
}

// get is the count stored for k at version, if any.
func (c *teamRatedCache) get(k teamRatedKey, version int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[k]
	if !ok || v.version != version {
		return 0, false
	}
	return v.count, true
}

// put stores a count read at a version, unless one of a later version is
// stored already (a view that started earlier and finished later).
func (c *teamRatedCache) put(k teamRatedKey, v teamRatedCount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counted++
	if old, ok := c.items[k]; ok && old.version > v.version {
		return
	}
	if c.items == nil || len(c.items) >= teamRatedCacheSize {
		c.items = map[teamRatedKey]teamRatedCount{}
	}
	c.items[k] = v
}

// TeamRatedCounts is how many times this handle counted a team's rated
// samples from the reviews (TeamRatedSamples' misses), for tests.
func (db *DB) TeamRatedCounts() int64 {
	db.teamRated.mu.Lock()
	defer db.teamRated.mu.Unlock()
	return db.teamRated.counted
}

// DatasetReviewsVersion reads the dataset's review version: a number the
// database moves on, in the same transaction, with every review of the
// dataset added, deleted or edited and every exclusion or readmission of a
// rater of its workspace (migration 00098's triggers). 0 when the dataset
// never had a review.
func (db *DB) DatasetReviewsVersion(ctx context.Context, datasetID int64) (int64, error) {
	var v int64
	err := db.Reader(ctx).Raw("SELECT version FROM dataset_review_versions WHERE dataset_id = ?", datasetID).Row().Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the review version of dataset %d: %w", datasetID, err)
	}
	return v, nil
}

// TeamRatedSamples counts the samples of a dataset that hold, on a
// criterion's scale (lo to hi), at least one current rating that counts:
// a reviewer's latest review of the sample on that scale holds a rating
// (ListReviewerRatedRows' rule, for any reviewer), and no owner excluded
// the reviewer's ratings (RatingExclusion). It stops at limit (at most
// TeamRatedBound), so a count equal to limit means "limit or more".
//
// The count is read from the reviews once per dataset review version
// (DatasetReviewsVersion) and kept in memory: a view while the version
// stands reads one row, where the count reads every review of the
// criterion (about 28 ms at 34,000 reviews; BENCHMARKS.md, reviewperf51).
// The count and its version are read by one statement, so from one
// snapshot: a count is never stored under a version it was not counted
// at, and a review change, which moves the version in its own
// transaction, is never served a count from before it.
func (db *DB) TeamRatedSamples(ctx context.Context, wsID, datasetID int64, criterion string, lo, hi float64, limit int) (int, error) {
	if limit <= 0 || limit > TeamRatedBound {
		limit = TeamRatedBound
	}
	k := teamRatedKey{wsID: wsID, datasetID: datasetID, criterion: criterion, lo: lo, hi: hi, limit: limit}
	version, err := db.DatasetReviewsVersion(ctx, datasetID)
	if err != nil {
		return 0, err
	}
	if n, ok := db.teamRated.get(k, version); ok {
		return int(n), nil
	}
	var c teamRatedCount
	q, args := teamRatedQuery(wsID, datasetID, criterion, lo, hi, limit)
	q = "SELECT COALESCE((SELECT v.version FROM dataset_review_versions v WHERE v.dataset_id = ?), 0), (" + q + ")"
	if err := db.Reader(ctx).Raw(q, append([]any{datasetID}, args...)...).Row().Scan(&c.version, &c.count); err != nil {
		return 0, fmt.Errorf("count the samples of dataset %d rated on %s: %w", datasetID, criterion, err)
	}
	db.teamRated.put(k, c)
	return int(c.count), nil
}

// CountTeamRatedSamples is TeamRatedSamples read from the reviews every
// time, never from memory: what every view cost before reviewperf51, kept
// for the benchmark and the tests that check the served count against it.
func (db *DB) CountTeamRatedSamples(ctx context.Context, wsID, datasetID int64, criterion string, lo, hi float64, limit int) (int, error) {
	if limit <= 0 || limit > TeamRatedBound {
		limit = TeamRatedBound
	}
	q, args := teamRatedQuery(wsID, datasetID, criterion, lo, hi, limit)
	var n int64
	if err := db.Reader(ctx).Raw(q, args...).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("count the samples of dataset %d rated on %s: %w", datasetID, criterion, err)
	}
	return int(n), nil
}

// teamRatedQuery is the statement that counts TeamRatedSamples from the
// reviews, and its arguments: one statement, no id leaves the database.
func teamRatedQuery(wsID, datasetID int64, criterion string, lo, hi float64, limit int) (string, []any) {
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
	return q, []any{wsID, datasetID, criterion, lo, hi, limit}
}
