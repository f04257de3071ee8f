package report

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRatingsProofNotStoredOverAnExclusion: a run's ratings key is stored
// with the proof of the state read before its ratings (provenRatingsKey),
// after comparing that state with the state read again once they are
// hashed. An exclusion or readmission made after that comparison and
// before the proof is stored was not seen by it: the proof of the ratings
// as they counted before was stored over the one a later view stored of
// them as they count now, and the next view read and hashed every rating
// again (a stale proof stored). Now the run's humans_version, which every
// exclusion and readmission moves, is read before the state and compared
// in the statement that stores the proof. Each case pauses one
// computation of the key at a point (withProofPause, no sleeps), changes
// the exclusions there, and may compute the key in full meanwhile as
// another view would; then, on both databases, the key that computation
// returned is the ratings' as they were read (never a mix), and a view
// after it gives the key a fresh read of the ratings hashes, reading no
// rating when the case leaves the current proof stored.
func TestRatingsProofNotStoredOverAnExclusion(t *testing.T) {
	type at struct {
		stage proofStage
		// change runs at the pause: set the excluded raters (true
		// excludes) and key the ratings as another view does.
		change []func(env proofRaceEnv)
	}
	cases := []struct {
		name string
		// excludedAtStart: the rater's ratings are excluded when the
		// computation starts (counted otherwise).
		excludedAtStart bool
		pause           at
		// noRead: the view after reads no rating (the stored proof is the
		// current state's); false where it may read them again.
		noRead bool
	}{
		{"readmitted before the proof was stored, the current proof stored meanwhile by another view", true,
			at{proofSave, []func(proofRaceEnv){readmit, viewKey}}, true},
		{"excluded before the proof was stored, the current proof stored meanwhile by another view", false,
			at{proofSave, []func(proofRaceEnv){exclude, viewKey}}, true},
		{"readmitted and excluded again while the ratings were read", true,
			at{proofStateAfter, []func(proofRaceEnv){readmit, exclude}}, false},
		{"excluded and readmitted while the ratings were read", false,
			at{proofStateAfter, []func(proofRaceEnv){exclude, readmit}}, false},
		{"excluded and readmitted before the proof was stored", false,
			at{proofSave, []func(proofRaceEnv){exclude, readmit}}, false},
		{"readmitted while the ratings were read", true,
			at{proofStateAfter, []func(proofRaceEnv){readmit}}, false},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 40)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, db, wsID, run.DatasetID, rows, run.RubricSnapshot.Criteria, 49, 600)
		_, err = db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		env := proofRaceEnv{t: t, ctx: ctx, db: db, run: &run, who: hist.Excluded}
		// fresh is the key a fresh read of the ratings hashes.
		fresh := func() string {
			t.Helper()
			choice, err := db.FindRunHumanSource(ctx, runID)
			must(t, err)
			pre, err := readCurrentReviews(ctx, db, run, choice.UptoRatingID, false)
			must(t, err)
			key, _, err := ratingsKeyOf(ctx, db, run, choice, pre)
			must(t, err)
			return key
		}
		for _, c := range cases {
			must(t, db.SetRatingsExcluded(ctx, wsID, hist.Excluded.ID, c.excludedAtStart, "owner"))
			must(t, db.Gorm.Exec("DELETE FROM run_ratings_proofs WHERE run_id = ?", runID).Error)
			before := fresh()
			paused := 0
			pctx := context.WithValue(ctx, proofPauseKey{}, func(s proofStage) {
				if s != c.pause.stage {
					return
				}
				paused++
				for _, f := range c.pause.change {
					f(env)
				}
			})
			pre, err := ChosenReviewsOnDemand(pctx, db, run)
			must(t, err)
			got, err := RatingsKey(pctx, db, run, pre)
			must(t, err)
			if paused != 1 {
				t.Fatalf("%s: paused %d times, want once", c.name, paused)
			}
			if got != before {
				t.Errorf("%s: the paused computation keyed %q, the ratings it read hash %q", c.name, got, before)
			}
			want := fresh()
			pre, err = ChosenReviewsOnDemand(ctx, db, run)
			must(t, err)
			next, err := RatingsKey(ctx, db, run, pre)
			must(t, err)
			if next != want {
				t.Errorf("%s: the next view keyed %q, a fresh read hashes %q: a stale key was served", c.name, next, want)
			}
			if read := pre.later == nil; c.noRead && read {
				t.Errorf("%s: the next view read the ratings again: the proof of the ratings as they counted before was stored over the current one", c.name)
			}
			// Whatever is stored now proves the current state: the view
			// after next reads nothing.
			pre, err = ChosenReviewsOnDemand(ctx, db, run)
			must(t, err)
			if again, err := RatingsKey(ctx, db, run, pre); err != nil || again != want || pre.later == nil {
				t.Errorf("%s: the view after: key %q (want %q), %v, read %v", c.name, again, want, err, pre.later == nil)
			}
		}
	})
}

// proofRaceEnv is what TestRatingsProofNotStoredOverAnExclusion's changes
// act on: who is the rater excluded and readmitted.
type proofRaceEnv struct {
	t   *testing.T
	ctx context.Context
	db  *models.DB
	run *models.Run
	who models.User
}

// exclude excludes the rater's ratings.
func exclude(env proofRaceEnv) {
	env.t.Helper()
	must(env.t, env.db.SetRatingsExcluded(env.ctx, env.run.WorkspaceID, env.who.ID, true, "owner"))
}

// readmit counts the rater's ratings again.
func readmit(env proofRaceEnv) {
	env.t.Helper()
	must(env.t, env.db.SetRatingsExcluded(env.ctx, env.run.WorkspaceID, env.who.ID, false, "owner"))
}

// viewKey keys the ratings as another view does meanwhile (no pause): it
// stores the proof of the ratings as they count now.
func viewKey(env proofRaceEnv) {
	env.t.Helper()
	pre, err := ChosenReviewsOnDemand(env.ctx, env.db, *env.run)
	must(env.t, err)
	_, err = RatingsKey(env.ctx, env.db, *env.run, pre)
	must(env.t, err)
	if pre.later != nil {
		env.t.Fatal("the other view did not key the ratings afresh")
	}
}
