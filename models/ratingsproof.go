package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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

// SaveRunRatingsProof stores the run's proof, replacing the one before.
func (db *DB) SaveRunRatingsProof(ctx context.Context, p RunRatingsProof) error {
	if p.ComputedAt.IsZero() {
		p.ComputedAt = time.Now().UTC()
	}
	err := db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "run_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"dataset_id", "proof", "user_ids", "ratings_key", "computed_at"}),
	}).Create(&p).Error
	if err != nil {
		return fmt.Errorf("store the ratings proof of run %d: %w", p.RunID, err)
	}
	return nil
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
