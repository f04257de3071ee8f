package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
)

// RunRatingsProof is what a run's browser-ratings key (the report
// package's hash of the current ratings its reports read, which its stored
// summary and per-sample results are keyed by) was computed from, as a few
// small queries read it back: while a view computes the same Proof, the
// stored RatingsKey is the key it would compute, and the ratings are not
// read (migration 00091).
type RunRatingsProof struct {
	RunID int64 `gorm:"primaryKey;autoIncrement:false"`
	// DatasetID is the run's: editing one of its reviews in place drops
	// the proof (a trigger of migration 00091).
	DatasetID int64
	Proof     string
	// UserIDs are the accounts the key names, comma-separated, whose
	// names the proof holds (ReviewerIdentities).
	UserIDs    string
	RatingsKey string
	ComputedAt time.Time
}

// TableName is run_ratings_proofs.
func (RunRatingsProof) TableName() string { return "run_ratings_proofs" }

// Users are the accounts of UserIDs; an id that does not read is left out
// (a proof then never matches, as its names differ).
func (p RunRatingsProof) Users() []int64 {
	var ids []int64
	for _, s := range strings.Split(p.UserIDs, ",") {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// JoinUserIDs writes ids as RunRatingsProof.UserIDs holds them.
func JoinUserIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

// FindRunRatingsProof returns the run's stored proof; found is false when
// there is none.
func (db *DB) FindRunRatingsProof(ctx context.Context, runID int64) (p RunRatingsProof, found bool, err error) {
	err = db.Reader(ctx).Where("run_id = ?", runID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read the ratings proof of run %d: %w", runID, err)
	}
	return p, true, nil
}

// RunHumansVersion reads the run's humans_version (Run.HumansVersion) as
// stored now: every exclusion or readmission of a rater in its workspace
// (SetRatingsExcluded), choice of its human ratings (SetRunHumanSource)
// and deletion of an account that rated there moves it on. found is false
// when the run is gone.
func (db *DB) RunHumansVersion(ctx context.Context, runID int64) (version int, found bool, err error) {
	var vs []int
	if err := db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ?", runID).Limit(1).Pluck("humans_version", &vs).Error; err != nil {
		return 0, false, fmt.Errorf("read the human ratings' version of run %d: %w", runID, err)
	}
	if len(vs) == 0 {
		return 0, false, nil
	}
	return vs[0], true, nil
}

// SaveRunRatingsProof stores the run's proof, replacing the one before,
// provided the run's humans_version is still humansVersion, as read
// before the ratings the proof's key was computed from: one statement,
// which the version is checked and the proof written in (on PostgreSQL
// the run's row is locked for it, so an exclusion committing meanwhile
// waits, or is seen). saved is false, and nothing written, when it moved:
// a rater was excluded or readmitted (or the ratings chosen again) while
// the key was computed, so the key may have been computed from ratings as
// they counted before, or the proof stored meanwhile by a later view be
// the current one; the next view computes the key again (liveratings49).
func (db *DB) SaveRunRatingsProof(ctx context.Context, p RunRatingsProof, humansVersion int) (saved bool, err error) {
	if p.ComputedAt.IsZero() {
		p.ComputedAt = time.Now().UTC()
	}
	lock := ""
	if db.Dialect == Postgres {
		lock = " FOR SHARE"
	}
	res := db.Gorm.WithContext(ctx).Exec("INSERT INTO run_ratings_proofs (run_id, dataset_id, proof, user_ids, ratings_key, computed_at)"+
		" SELECT id, ?, ?, ?, ?, ? FROM runs WHERE id = ? AND humans_version = ?"+lock+
		" ON CONFLICT (run_id) DO UPDATE SET dataset_id = excluded.dataset_id, proof = excluded.proof, user_ids = excluded.user_ids,"+
		" ratings_key = excluded.ratings_key, computed_at = excluded.computed_at",
		p.DatasetID, p.Proof, p.UserIDs, p.RatingsKey, p.ComputedAt, p.RunID, humansVersion)
	if res.Error != nil {
		return false, fmt.Errorf("store the ratings proof of run %d: %w", p.RunID, res.Error)
	}
	return res.RowsAffected > 0, nil
}

// RatingsTally sums up a dataset's reviews of some criteria with an id up
// to a cut-off. Reviews are only ever added (with a larger id than any
// before, or, racing, one a little smaller), deleted with their sample,
// dataset or workspace, or lose their account (user_id set NULL when it is
// deleted): each of these changes the tally, so an equal tally is the same
// reviews.
type RatingsTally struct {
	// Reviews counts them, Accounts those with an account.
	Reviews, Accounts int64
	// IDSum and MaxID sum and top their ids, UserSum their accounts' ids.
	IDSum, MaxID, UserSum int64
}

// TallyRatings is the RatingsTally of the dataset's reviews of the named
// criteria with an id up to uptoID, on any scale, by anyone (excluded or
// not), current or replaced: one aggregate read from the
// review_ratings_reviewer index alone (dataset, criterion, account, id),
// nothing returned but five numbers. The id's term is written +id so that
// SQLite does not read the reviews up to the cut-off through
// review_ratings_dataset (dataset, id) and each one's row from the table
// (TestRatingsTallyCountsWhatChanges); PostgreSQL reads it as id.
func (db *DB) TallyRatings(ctx context.Context, datasetID int64, criteria []string, uptoID int64) (RatingsTally, error) {
	var t RatingsTally
	if len(criteria) == 0 {
		return t, nil
	}
	row := db.Reader(ctx).Raw("SELECT COUNT(*), COUNT(user_id), COALESCE(SUM(id), 0), COALESCE(MAX(id), 0), COALESCE(SUM(user_id), 0)"+
		" FROM review_ratings WHERE dataset_id = ? AND criterion IN ? AND +id <= ?", datasetID, criteria, uptoID).Row()
	if err := row.Scan(&t.Reviews, &t.Accounts, &t.IDSum, &t.MaxID, &t.UserSum); err != nil {
		return t, fmt.Errorf("tally the ratings of dataset %d: %w", datasetID, err)
	}
	return t, nil
}

// ReviewerIdentities are the accounts of userIDs (of workspace wsID) as a
// read of their reviews names them: one review each, in the order given,
// with only UserID, Reviewer (the account's current email; "" when the
// account is gone), ReviewerName and NameRank set (withCurrentReviewers).
func (db *DB) ReviewerIdentities(ctx context.Context, wsID int64, userIDs []int64) ([]ReviewRating, error) {
	rs := make([]ReviewRating, len(userIDs))
	for i, id := range userIDs {
		rs[i] = ReviewRating{WorkspaceID: wsID, UserID: &id}
	}
	if err := db.withCurrentReviewers(ctx, wsID, rs); err != nil {
		return nil, err
	}
	return rs, nil
}

// ReviewersOf are the distinct accounts among the reviews, sorted, each
// with the names the reviews carry (ReviewerIdentities' fields).
func ReviewersOf(rs []ReviewRating) []ReviewRating {
	seen := map[int64]bool{}
	var out []ReviewRating
	for _, r := range rs {
		if r.UserID == nil || seen[*r.UserID] {
			continue
		}
		seen[*r.UserID] = true
		id := *r.UserID
		out = append(out, ReviewRating{WorkspaceID: r.WorkspaceID, UserID: &id, Reviewer: r.Reviewer, ReviewerName: r.ReviewerName, NameRank: r.NameRank})
	}
	slices.SortFunc(out, func(a, b ReviewRating) int { return cmp.Compare(*a.UserID, *b.UserID) })
	return out
}

// CurrentRatingCounts count a dataset's current browser ratings as a run's
// page tells them (its human-ratings box).
type CurrentRatingCounts struct {
	// Rated counts each reviewer's current review of each sample that
	// holds a rating; SinceCutOff those of them given after the cut-off
	// (which a report as of it does not read yet).
	Rated, SinceCutOff int
	// Withdrawn counts the current reviews given after the cut-off that
	// withdraw a rating the reviewer's review as of the cut-off held
	// (which such a report still reads).
	Withdrawn int
}

// CountCurrentRatings counts, of the dataset's criteria (the keys of
// scales), each reviewer's current review of each sample on the
// criterion's scale now and as of the cut-off uptoID, as
// ListCurrentRatingsNowAndAt picks them, leaving out the reviews of the
// excluded accounts: three numbers from one statement, where reading the
// reviews into Go to count them was about half of a run page's bytes at
// 100,000 samples (BENCHMARKS.md, ratings48).
func (db *DB) CountCurrentRatings(ctx context.Context, wsID, datasetID int64, scales map[string]evaluator.Scale, uptoID int64, excluded map[int64]bool) (CurrentRatingCounts, error) {
	var c CurrentRatingCounts
	if len(scales) == 0 {
		return c, nil
	}
	args := []any{uptoID, wsID, datasetID}
	var each []string
	for _, name := range slices.Sorted(maps.Keys(scales)) {
		each = append(each, "(m.criterion = ? AND m.lo = ? AND m.hi = ?)")
		args = append(args, name, scales[name].Lo, scales[name].Hi)
	}
	// The groups of listCurrentRatings (the one definition of a current
	// review), each with its review now (n) and as of the cut-off (t).
	q := "WITH g AS (SELECT MAX(m.id) AS now_id, MAX(CASE WHEN m.id <= ? THEN m.id END) AS then_id FROM review_ratings m" +
		" WHERE m.workspace_id = ? AND m.dataset_id = ? AND (" + strings.Join(each, " OR ") + ")" +
		" GROUP BY m.criterion, m.row_id, m.user_id, CASE WHEN m.user_id IS NULL THEN m.reviewer END)" +
		" SELECT COUNT(CASE WHEN n.score IS NOT NULL THEN 1 END), COUNT(CASE WHEN n.score IS NOT NULL AND n.id > ? THEN 1 END)," +
		" COUNT(CASE WHEN n.score IS NULL AND n.id > ? AND t.score IS NOT NULL THEN 1 END)" +
		" FROM g JOIN review_ratings n ON n.id = g.now_id LEFT JOIN review_ratings t ON t.id = g.then_id"
	args = append(args, uptoID, uptoID)
	if len(excluded) > 0 {
		q += " WHERE n.user_id IS NULL OR n.user_id NOT IN ?"
		args = append(args, slices.Sorted(maps.Keys(excluded)))
	}
	if err := db.Reader(ctx).Raw(q, args...).Row().Scan(&c.Rated, &c.SinceCutOff, &c.Withdrawn); err != nil {
		return c, fmt.Errorf("count the current ratings of dataset %d: %w", datasetID, err)
	}
	return c, nil
}
