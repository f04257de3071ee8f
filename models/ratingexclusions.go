package models

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// What happens to a person's browser ratings when they leave a workspace:
// they stay. A rating was given in good faith as one of the workspace's
// human ratings; a report, an alignment and the exports keep counting it,
// so removing a member never changes a figure silently. The pages that
// list reviews mark its reviewer "(no longer a member)", and an owner who
// decides a person's ratings should not count (a careless or departed
// annotator) excludes them on the members page: from then on no report,
// alignment, dataset export or API figure reads that person's ratings, and
// each report says how many ratings it left out. Their reviews stay stored
// and listed, marked as excluded, and the owner can count them again.

// RatingExclusion leaves every browser rating an account gave in a
// workspace out of its human ratings.
type RatingExclusion struct {
	WorkspaceID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID      int64 `gorm:"primaryKey;autoIncrement:false"`
	ExcludedBy  string
	CreatedAt   time.Time
}

// Rater is an account that gave browser ratings in a workspace, as the
// members page lists them: whether they are still a member (and as what)
// and whether an owner excluded their ratings.
type Rater struct {
	User User
	// Role is their role now; "" when they are no longer a member.
	Role Role
	// Ratings counts the ratings they hold now: the samples and criteria
	// whose latest review by them holds a rating. A sample rated again, or
	// a comment added later, is still one rating, and a withdrawn one is
	// none (it counted every submission, so "their 24 ratings still count"
	// could be said of 14 ratings).
	Ratings int64
	// Excluded is the exclusion, nil while their ratings count.
	Excluded *RatingExclusion
}

// ExcludedRaters returns the accounts whose ratings an owner excluded in
// the workspace, by user id.
func (db *DB) ExcludedRaters(ctx context.Context, wsID int64) (map[int64]bool, error) {
	var ids []int64
	if err := db.Reader(ctx).Model(&RatingExclusion{}).Where("workspace_id = ?", wsID).Pluck("user_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("read the excluded raters of workspace %d: %w", wsID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// MemberIDs returns the user ids of the workspace's members.
func (db *DB) MemberIDs(ctx context.Context, wsID int64) (map[int64]bool, error) {
	var ids []int64
	if err := db.Reader(ctx).Model(&Membership{}).Where("workspace_id = ?", wsID).Pluck("user_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("read the members of workspace %d: %w", wsID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// WithoutExcluded drops the reviews of the excluded accounts (by user id);
// a review without an account (a name typed in local mode) is kept. It
// returns the reviews kept and how many with a rating it dropped. rs is
// returned as it is when nobody is excluded.
func WithoutExcluded(rs []ReviewRating, excluded map[int64]bool) ([]ReviewRating, int) {
	if len(excluded) == 0 {
		return rs, 0
	}
	out := make([]ReviewRating, 0, len(rs))
	dropped := 0
	for _, r := range rs {
		if r.UserID != nil && excluded[*r.UserID] {
			if r.Score != nil {
				dropped++
			}
			continue
		}
		out = append(out, r)
	}
	return out, dropped
}

// ListRaters lists the accounts that gave a browser rating in the
// workspace, and the excluded ones, members first, then by name.
func (db *DB) ListRaters(ctx context.Context, wsID int64) ([]Rater, error) {
	var counts []struct {
		UserID  int64
		Ratings int64
	}
	// Everyone who ever gave a rating is listed (a report recomputed before
	// they withdrew it may still count it), with the ratings they hold now:
	// each sample and criterion's latest review by them, when it holds one.
	if err := db.Reader(ctx).Raw(`SELECT user_id, SUM(CASE WHEN n = 1 AND score IS NOT NULL THEN 1 ELSE 0 END) AS ratings
		FROM (SELECT user_id, score, ROW_NUMBER() OVER (PARTITION BY user_id, dataset_id, row_id, criterion ORDER BY id DESC) AS n
			FROM review_ratings WHERE workspace_id = ? AND user_id IS NOT NULL) latest
		GROUP BY user_id HAVING COUNT(score) > 0`, wsID).Scan(&counts).Error; err != nil {
		return nil, fmt.Errorf("count the ratings of workspace %d: %w", wsID, err)
	}
	var excl []RatingExclusion
	if err := db.Reader(ctx).Where("workspace_id = ?", wsID).Find(&excl).Error; err != nil {
		return nil, fmt.Errorf("read the excluded raters of workspace %d: %w", wsID, err)
	}
	byUser := map[int64]*Rater{}
	var ids []int64
	for _, c := range counts {
		byUser[c.UserID] = &Rater{Ratings: c.Ratings}
		ids = append(ids, c.UserID)
	}
	for i := range excl {
		r, ok := byUser[excl[i].UserID]
		if !ok {
			r = &Rater{}
			byUser[excl[i].UserID] = r
			ids = append(ids, excl[i].UserID)
		}
		r.Excluded = &excl[i]
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var users []User
	if err := db.Reader(ctx).Where("id IN ?", ids).Find(&users).Error; err != nil {
		return nil, err
	}
	var ms []Membership
	if err := db.Reader(ctx).Where("workspace_id = ? AND user_id IN ?", wsID, ids).Find(&ms).Error; err != nil {
		return nil, err
	}
	role := map[int64]Role{}
	for _, m := range ms {
		role[m.UserID] = m.Role
	}
	out := make([]Rater, 0, len(users))
	for _, u := range users {
		r := byUser[u.ID]
		r.User, r.Role = u, role[u.ID]
		out = append(out, *r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Role == "") != (out[j].Role == "") {
			return out[i].Role != ""
		}
		if out[i].User.Name != out[j].User.Name {
			return out[i].User.Name < out[j].User.Name
		}
		return out[i].User.ID < out[j].User.ID
	})
	return out, nil
}

// SetRatingsExcluded excludes (or, with exclude false, counts again) every
// browser rating the account gave in the workspace. The account must have
// rated there, or be excluded already. Every run of the workspace's human
// ratings version moves on in the same transaction, so no server process
// serves a report cached with the ratings as they counted before. Given
// an audit, its entry is written in the same transaction; asking for what
// is so already changes nothing and records nothing.
func (db *DB) SetRatingsExcluded(ctx context.Context, wsID, userID int64, exclude bool, by string, audit ...Audit[struct{}]) error {
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rated, excluded int64
		if err := tx.Model(&ReviewRating{}).Where("workspace_id = ? AND user_id = ?", wsID, userID).Count(&rated).Error; err != nil {
			return err
		}
		if err := tx.Model(&RatingExclusion{}).Where("workspace_id = ? AND user_id = ?", wsID, userID).Count(&excluded).Error; err != nil {
			return err
		}
		if rated == 0 && excluded == 0 {
			return Errorf(ENotFound, "account %d gave no rating in this workspace", userID)
		}
		if exclude == (excluded > 0) {
			return nil // already so
		}
		if exclude {
			e := RatingExclusion{WorkspaceID: wsID, UserID: userID, ExcludedBy: by, CreatedAt: time.Now().UTC()}
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&e).Error; err != nil {
				return err
			}
		} else if err := tx.Where("workspace_id = ? AND user_id = ?", wsID, userID).Delete(&RatingExclusion{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&Run{}).Where("workspace_id = ?", wsID).UpdateColumn("humans_version", gorm.Expr("humans_version + 1")).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, struct{}{})
	})
}
