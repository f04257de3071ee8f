package report

import (
	"context"
	"errors"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRatingsProofFollowsEveryChange: a finished run's stored results are
// proved current by a stored proof (provenRatingsKey, ratings48) instead of
// reading and hashing every current rating at each view, and that proof is
// exactly as strict as the hash: after each change of a history (both
// databases), the key a lookup uses is the one a fresh read of the ratings
// hashes (never a stale one), the stored summary and per-sample results are
// served exactly when the ratings the report reads did not change, and a
// lookup reads no rating at all (its reviews, made by ChosenReviewsOnDemand,
// stay unread) when nothing the key reads changed. After each change the
// summary is stored again, and the next lookup reads nothing.
func TestRatingsProofFollowsEveryChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 40)
		_, otherRunID := synthRun(t, db, 41)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		other, err := db.FindRun(ctx, wsID, otherRunID)
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		otherRows, err := db.ListDatasetRows(ctx, other.DatasetID, 0, 0)
		must(t, err)
		user := func(email, name string) models.User {
			t.Helper()
			u, err := db.CreateUser(ctx, wsID, models.RoleEditor, models.NewUser{Email: email, Name: name, Password: "correct horse battery"})
			must(t, err)
			return u
		}
		review := func(datasetID, rowID int64, who string, userID *int64, score float64) models.ReviewRating {
			t.Helper()
			r, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: datasetID, RowID: rowID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: who, UserID: userID, Score: &score, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
			return r
		}
		// zed reviewed in the workspace (another dataset) before anyone
		// here: taking a reviewer's display name, he comes first by it.
		zed := user("zed@x.test", "Zed")
		review(other.DatasetID, otherRows[0].ID, zed.Email, &zed.ID, 3)
		una := user("una@x.test", "Una") // never reviews
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, db, wsID, run.DatasetID, rows, run.RubricSnapshot.Criteria, 48, 600)
		account := func(email string) models.User {
			t.Helper()
			var u models.User
			must(t, db.Gorm.Where("email = ?", email).Take(&u).Error)
			return u
		}
		rita, sam := account("rita.new@x.test"), account("sam@x.test")
		_, err = db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		hist.Review(40) // after the cut-off
		// current is the ratings the report reads now, read afresh.
		current := func() (models.RunHumanSource, *BrowserReviews) {
			t.Helper()
			choice, err := db.FindRunHumanSource(ctx, runID)
			must(t, err)
			pre, err := readCurrentReviews(ctx, db, run, choice.UptoRatingID, false)
			must(t, err)
			return choice, pre
		}
		// aRating is a current rating with a score the report reads, by
		// the account (nil: anyone).
		aRating := func(userID *int64) models.ReviewRating {
			t.Helper()
			_, pre := current()
			for _, r := range pre.ByName[crit.Name] {
				if r.Score != nil && r.Lo == crit.Lo && r.Hi == crit.Hi && (userID == nil || (r.UserID != nil && *r.UserID == *userID)) {
					return r
				}
			}
			t.Fatalf("no current rating by %v", userID)
			return models.ReviewRating{}
		}
		exec := func(q string, args ...any) {
			t.Helper()
			must(t, db.Gorm.Exec(q, args...).Error)
		}
		// lookup looks the stored summary up as a review queue's view
		// does: its reviews read on demand.
		lookup := func() (SummaryLookup, *BrowserReviews) {
			t.Helper()
			pre, err := ChosenReviewsOnDemand(ctx, db, run)
			must(t, err)
			look, err := LookupSummary(ctx, db, wsID, runID, Options{Reviews: pre})
			must(t, err)
			must(t, StoredSamplesCurrent(ctx, db, run, pre))
			return look, pre
		}
		_, err = LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		steps := []struct {
			name   string
			change func()
			// recompute: the ratings the report reads changed, so the
			// stored results are not served; read: the lookup reads the
			// ratings (the proof no longer holds).
			recompute, read bool
		}{
			{"nothing", func() {}, false, false},
			{"ratings given, changed and withdrawn after the cut-off", func() { hist.Review(30) }, false, false},
			{"a rating of another dataset", func() { review(other.DatasetID, otherRows[1].ID, "Ann", nil, 2) }, false, false},
			{"an account that rated nothing here renamed", func() {
				exec("UPDATE users SET name = ? WHERE id = ?", "Una B", una.ID)
			}, false, false},
			{"a member who rated removed from the workspace (their ratings still count)", func() {
				_, err := db.RemoveMember(ctx, wsID, rita.ID, false)
				must(t, err)
			}, false, false},
			{"the ratings chosen again, with those since", func() {
				_, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
				must(t, err)
			}, true, true},
			{"the source changed to both", func() {
				_, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBoth, "tester")
				must(t, err)
				hist.Review(10)
			}, true, true},
			{"a review on another scale up to the cut-off deleted (the report never read it)", func() {
				choice, _ := current()
				var id int64
				must(t, db.Gorm.Raw("SELECT MAX(id) FROM review_ratings WHERE dataset_id = ? AND criterion = ? AND NOT (lo = ? AND hi = ?) AND id <= ?",
					run.DatasetID, crit.Name, crit.Lo, crit.Hi, choice.UptoRatingID).Scan(&id).Error)
				if id == 0 {
					t.Fatal("no review on another scale")
				}
				exec("DELETE FROM review_ratings WHERE id = ?", id)
			}, false, true},
			{"a current rating deleted with its sample", func() {
				r := aRating(nil)
				exec("DELETE FROM review_ratings WHERE row_id = ?", r.RowID)
				exec("DELETE FROM dataset_rows WHERE id = ?", r.RowID)
			}, true, true},
			{"a current rating edited in place", func() {
				r := aRating(nil)
				exec("UPDATE review_ratings SET score = ? WHERE id = ?", crit.Lo+crit.Hi-*r.Score+0.5, r.ID)
			}, true, true},
			{"a rating account's email changed", func() {
				aRating(&sam.ID)
				exec("UPDATE users SET email = ? WHERE id = ?", "sam.new@x.test", sam.ID)
			}, true, true},
			{"a rating account's display name changed", func() {
				aRating(&rita.ID)
				exec("UPDATE users SET name = ? WHERE id = ?", "Rita B", rita.ID)
			}, true, true},
			{"an account that reviewed first elsewhere takes a rating account's display name", func() {
				aRating(&sam.ID) // sam is "Rita": zed becomes "Rita", sam "Rita (2)"
				exec("UPDATE users SET name = ? WHERE id = ?", "Rita", zed.ID)
			}, true, true},
			{"a rating account's ratings excluded", func() {
				aRating(&sam.ID)
				must(t, db.SetRatingsExcluded(ctx, wsID, sam.ID, true, "owner"))
			}, true, true},
			{"the exclusion lifted", func() { must(t, db.SetRatingsExcluded(ctx, wsID, sam.ID, false, "owner")) }, true, true},
			{"a rating account deleted (its ratings become its typed name's)", func() {
				aRating(&sam.ID)
				exec("DELETE FROM users WHERE id = ?", sam.ID)
			}, true, true},
		}
		for _, st := range steps {
			st.change()
			choice, fresh := current()
			want, _, err := ratingsKeyOf(ctx, db, run, choice, fresh)
			must(t, err)
			look, pre := lookup0(t, ctx, db, wsID, run)
			if look.ratings != want {
				t.Errorf("%s: the lookup keyed the ratings %q, a fresh read hashes %q: a stale key was served", st.name, look.ratings, want)
			}
			if served := look.Stored != nil; served == st.recompute {
				t.Errorf("%s: stored summary served %v, want %v", st.name, served, !st.recompute)
			}
			err = StoredSamplesCurrent(ctx, db, run, nil)
			if stale := errors.Is(err, ErrSamplesNotStored); stale != st.recompute || (err != nil && !stale) {
				t.Errorf("%s: the stored samples' check gave %v, want stale %v", st.name, err, st.recompute)
			}
			if read := pre != nil && pre.later == nil; read != st.read {
				t.Errorf("%s: the lookup read the ratings: %v, want %v", st.name, read, st.read)
			}
			// Stored again: the next view is proved current and reads
			// nothing.
			_, err = LoadSummary(ctx, db, wsID, runID, Options{})
			must(t, err)
			look, pre = lookup()
			if look.Stored == nil || pre == nil || pre.later == nil {
				t.Errorf("%s, stored again: served %v, ratings read %v", st.name, look.Stored != nil, pre == nil || pre.later == nil)
			}
		}
	})
}

// lookup0 is the lookup of a review queue's view (its reviews read on
// demand), without the stored samples' check.
func lookup0(t *testing.T, ctx context.Context, db *models.DB, wsID int64, run models.Run) (SummaryLookup, *BrowserReviews) {
	t.Helper()
	pre, err := ChosenReviewsOnDemand(ctx, db, run)
	must(t, err)
	look, err := LookupSummary(ctx, db, wsID, run.ID, Options{Reviews: pre})
	must(t, err)
	return look, pre
}
