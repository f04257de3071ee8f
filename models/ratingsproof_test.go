package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"gorm.io/gorm"
)

// TestRatingsTallyCountsWhatChanges: the tally a run's ratings proof holds
// (TallyRatings, ratings48) changes with every change of the reviews of
// the dataset's criteria up to the cut-off that the product can make (a
// review added, deleted, or losing its account when the account is
// deleted) and with none after the cut-off, of another criterion or of
// another dataset; on SQLite it is read from an index alone, never the
// table. Both databases.
func TestRatingsTallyCountsWhatChanges(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		mustTally(t, err)
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		mustTally(t, db.CreateProject(ctx, &p))
		dataset := func(name string) (models.Dataset, []models.DatasetRow) {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
			mustTally(t, db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := range 5 {
					if err := put(models.DatasetRow{ExternalID: fmt.Sprint(i), Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{}}); err != nil {
						return err
					}
				}
				return nil
			}))
			rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
			mustTally(t, err)
			return ds, rows
		}
		ds, rows := dataset("mine")
		other, otherRows := dataset("other")
		ann, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "ann@x.test", Name: "Ann", Password: "correct horse battery"})
		mustTally(t, err)
		rate := func(d models.Dataset, row models.DatasetRow, crit string, userID *int64) models.ReviewRating {
			t.Helper()
			v := 3.0
			r, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: d.ID, RowID: row.ID, Criterion: crit,
				Reviewer: "ann@x.test", UserID: userID, Score: &v, Lo: 1, Hi: 5})
			mustTally(t, err)
			return r
		}
		for _, r := range rows[:3] {
			rate(ds, r, "a", &ann.ID)
			rate(ds, r, "b", nil)
		}
		upto := rate(ds, rows[3], "a", nil).ID
		criteria := []string{"a", "b"}
		tally := func() models.RatingsTally {
			t.Helper()
			got, err := db.TallyRatings(ctx, ds.ID, criteria, upto)
			mustTally(t, err)
			return got
		}
		was := tally()
		if was.Reviews != 7 || was.Accounts != 3 || was.MaxID != upto {
			t.Fatalf("tally %+v, want 7 reviews, 3 with an account, newest %d", was, upto)
		}
		exec := func(q string, args ...any) { t.Helper(); mustTally(t, db.Gorm.Exec(q, args...).Error) }
		for _, step := range []struct {
			name    string
			change  func()
			changes bool
		}{
			{"a review after the cut-off", func() { rate(ds, rows[0], "a", &ann.ID) }, false},
			{"a review of another criterion", func() { rate(ds, rows[4], "c", nil) }, false},
			{"a review of another dataset", func() { rate(other, otherRows[0], "a", &ann.ID) }, false},
			{"a review up to the cut-off deleted", func() {
				exec("DELETE FROM review_ratings WHERE dataset_id = ? AND row_id = ? AND criterion = ? AND id <= ?", ds.ID, rows[2].ID, "b", upto)
			}, true},
			{"a review committed late with an id under the cut-off", func() {
				exec("INSERT INTO review_ratings (id, workspace_id, dataset_id, row_id, criterion, reviewer, score, lo, hi, created_at) VALUES (0, ?, ?, ?, 'b', 'x', 2, 1, 5, ?)",
					ws.ID, ds.ID, rows[4].ID, time.Now().UTC())
			}, true},
			{"the account that rated deleted", func() { exec("DELETE FROM users WHERE id = ?", ann.ID) }, true},
		} {
			step.change()
			now := tally()
			if (now != was) != step.changes {
				t.Errorf("%s: tally %+v, before %+v: changed %v, want %v", step.name, now, was, now != was, step.changes)
			}
			was = now
		}
		if db.Dialect != models.SQLite {
			return
		}
		// The statement TallyRatings sends, as it sends it.
		var q string
		var vars []any
		for _, g := range []*gorm.DB{db.Gorm, db.Read} {
			if g == nil {
				continue
			}
			mustTally(t, g.Callback().Row().After("gorm:row").Register("test:tally", func(tx *gorm.DB) {
				q, vars = tx.Statement.SQL.String(), append([]any(nil), tx.Statement.Vars...)
			}))
			defer g.Callback().Row().Remove("test:tally")
		}
		tally()
		if !strings.Contains(q, "COUNT(user_id)") {
			t.Fatalf("the hook saw %q", q)
		}
		var plan []struct {
			ID, Parent, Notused int
			Detail              string
		}
		mustTally(t, db.Gorm.Raw("EXPLAIN QUERY PLAN "+q, vars...).Scan(&plan).Error)
		for _, step := range plan {
			if strings.Contains(step.Detail, "review_ratings") && !strings.Contains(step.Detail, "COVERING INDEX") {
				t.Errorf("the tally is read by %q, not by an index alone", step.Detail)
			}
		}
	})
}

// mustTally fails the test on an error.
func mustTally(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSaveRunRatingsProofOnlyAtTheVersionRead: a run's ratings proof is
// stored only while the run's humans_version is the one read before its
// key was computed (liveratings49), in the statement that stores it: a
// first proof and a replacement are stored at the version read; after the
// version moved (a rater excluded or readmitted, the ratings chosen again)
// a proof computed before is not stored and the one stored stays whole;
// a run that is gone stores none. Both databases.
func TestSaveRunRatingsProofOnlyAtTheVersionRead(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		run, _ := twoRowRun(t, db, "proof")
		proof := func(p string) models.RunRatingsProof {
			return models.RunRatingsProof{RunID: run.ID, DatasetID: run.DatasetID, Proof: p, UserIDs: "1,2", RatingsKey: "key " + p}
		}
		bump := func() {
			t.Helper()
			mustTally(t, db.Gorm.Exec("UPDATE runs SET humans_version = humans_version + 1 WHERE id = ?", run.ID).Error)
		}
		for _, c := range []struct {
			name string
			// moved moves the version after it is read, before the store.
			moved     func()
			proof     string
			wantSaved bool
			// want is the proof stored after it ("" none).
			want string
		}{
			{"the first proof, nothing moved", func() {}, "p1", true, "p1"},
			{"a replacement, nothing moved", func() {}, "p2", true, "p2"},
			{"the version moved", bump, "p3", false, "p2"},
			{"moved twice (excluded and readmitted)", func() { bump(); bump() }, "p4", false, "p2"},
			{"read again after it moved", func() {}, "p5", true, "p5"},
		} {
			v, found, err := db.RunHumansVersion(ctx, run.ID)
			mustTally(t, err)
			if !found {
				t.Fatalf("%s: the run's version not found", c.name)
			}
			c.moved()
			saved, err := db.SaveRunRatingsProof(ctx, proof(c.proof), v)
			mustTally(t, err)
			if saved != c.wantSaved {
				t.Errorf("%s: stored %v, want %v", c.name, saved, c.wantSaved)
			}
			got, found, err := db.FindRunRatingsProof(ctx, run.ID)
			mustTally(t, err)
			if !found || got.Proof != c.want || got.RatingsKey != "key "+c.want || got.UserIDs != "1,2" || got.DatasetID != run.DatasetID {
				t.Errorf("%s: stored %+v (found %v), want proof %q whole", c.name, got, found, c.want)
			}
		}
		// A run that is gone: no version, nothing stored.
		mustTally(t, db.Gorm.Exec("DELETE FROM run_ratings_proofs WHERE run_id = ?", run.ID).Error)
		if _, found, err := db.RunHumansVersion(ctx, run.ID+1000); err != nil || found {
			t.Errorf("a missing run's version: found %v, %v", found, err)
		}
		saved, err := db.SaveRunRatingsProof(ctx, models.RunRatingsProof{RunID: run.ID + 1000, DatasetID: run.DatasetID, Proof: "x", RatingsKey: "k"}, 0)
		if err != nil || saved {
			t.Errorf("a missing run's proof: stored %v, %v", saved, err)
		}
	})
}
