package models_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRequeueSavesANewSpendCapOnlyWithTheRun: Resume and Continue may give
// the run a new spending cap, saved in the transaction that queues it. A
// refused one (the workspace's run limit, a cap not above what the run has
// spent, a cap that is no amount, a judge without prices) leaves the cap
// as it was; an accepted one saves it. The run page used to save the cap
// first and then resume, so a resume refused at the run limit left the cap
// changed, and Continue could not change the cap at all.
func TestRequeueSavesANewSpendCapOnlyWithTheRun(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		price := 1.0
		priced := w.judge.Snapshot()
		priced.Simulated, priced.PriceInputPerMTok, priced.PriceOutputPerMTok = false, &price, &price
		priced.BaseURL = "http://127.0.0.1:1/v1"
		queued := 0
		enqueue := func(context.Context, *sql.Tx, *models.Run) (int64, error) { queued++; return int64(500 + queued), nil }
		oldCap := 2.0
		newRun := func(name, status string, snap models.JudgeSnapshot) models.Run {
			t.Helper()
			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
				JudgeID: &w.judge.ID, Name: name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
				JudgeSnapshot: snap, CreatedAt: time.Now(), Settings: evaluator.Settings{Rounds: 1, BatchSize: 10, SpendCapUSD: &oldCap}}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			// It spent $1.50 (and $0.25 on probes) and stopped: at its
			// cap (failed, 3 of 10 batches unanswered) or paused.
			if err := db.Gorm.Exec(`UPDATE runs SET status = ?, batches_total = 10, batches_done = 7, cost_usd = 1.5, calls = 7,
 probe_calls = 1, probe_prompt_tokens = 250000, error = 'spending cap reached', started_at = ?, finished_at = ? WHERE id = ?`,
				status, time.Now().UTC(), time.Now().UTC(), r.ID).Error; err != nil {
				t.Fatal(err)
			}
			return r
		}
		capOf := func(id int64) *float64 {
			t.Helper()
			r, err := db.GetRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return r.Settings.SpendCapUSD
		}
		amount := func(x float64) *float64 { return &x }

		type requeue func(runID int64, req models.Requeue) (models.Run, error)
		for _, way := range []struct {
			name, status string
			do           requeue
		}{
			{"resume", models.RunFailed, func(id int64, req models.Requeue) (models.Run, error) {
				return db.ReopenRun(ctx, w.ws.ID, id, req, enqueue)
			}},
			{"continue", models.RunPaused, func(id int64, req models.Requeue) (models.Run, error) {
				return db.ContinueRun(ctx, w.ws.ID, id, req, enqueue)
			}},
		} {
			db.MaxActiveRunsPerWorkspace = 0
			run := newRun(way.name, way.status, priced)
			unpriced := newRun(way.name+" unpriced", way.status, models.JudgeSnapshot{Name: "no prices", BaseURL: "http://127.0.0.1:1/v1"})
			for _, tc := range []struct {
				name   string
				runID  int64
				limit  bool // the workspace is at its run limit
				cap    *float64
				code   string
				saying string
			}{
				{"at the run limit", run.ID, true, amount(9), models.EConflict, "BATCHEVAL_MAX_RUNS_PER_WORKSPACE"},
				{"below what was spent", run.ID, false, amount(1), models.EInvalid, "$1.75"},
				{"what was spent", run.ID, false, amount(1.75), models.EInvalid, "not above"},
				{"no amount", run.ID, false, amount(-3), models.EInvalid, "positive amount"},
				{"judge without prices", unpriced.ID, false, amount(9), models.EInvalid, "no prices"},
			} {
				if tc.limit {
					// One other run going fills a limit of one.
					db.MaxActiveRunsPerWorkspace = 1
					other := newRun("other", models.RunRunning, priced)
					_, err := way.do(tc.runID, models.Requeue{SpendCapUSD: tc.cap})
					if err := db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, models.RunSucceeded, other.ID).Error; err != nil {
						t.Fatal(err)
					}
					db.MaxActiveRunsPerWorkspace = 0
					if models.ErrorCode(err) != tc.code || !strings.Contains(models.ErrorMessage(err), tc.saying) {
						t.Errorf("%s %s: %v, want %s saying %q", way.name, tc.name, err, tc.code, tc.saying)
					}
				} else if _, err := way.do(tc.runID, models.Requeue{SpendCapUSD: tc.cap}); models.ErrorCode(err) != tc.code || !strings.Contains(models.ErrorMessage(err), tc.saying) {
					t.Errorf("%s %s: %v, want %s saying %q", way.name, tc.name, err, tc.code, tc.saying)
				}
				if c := capOf(tc.runID); c == nil || *c != oldCap {
					t.Errorf("%s %s: refused, but the cap is now %v; want $%g as it was", way.name, tc.name, c, oldCap)
				}
				if r, _ := db.GetRun(ctx, tc.runID); r.Status != way.status || queued != 0 {
					t.Errorf("%s %s: refused, but the run is %s with %d jobs queued", way.name, tc.name, r.Status, queued)
				}
			}
			got, err := way.do(run.ID, models.Requeue{SpendCapUSD: amount(9)})
			if err != nil || got.Status != models.RunQueued || queued != 1 {
				t.Fatalf("%s with a cap of $9: %v, run %s, %d jobs queued", way.name, err, got.Status, queued)
			}
			if c := capOf(run.ID); c == nil || *c != 9 {
				t.Errorf("%s with a cap of $9: the cap is %v", way.name, c)
			}
			queued = 0
			if err := db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id IN ?`, models.RunSucceeded, []int64{run.ID, unpriced.ID}).Error; err != nil {
				t.Fatal(err)
			}
		}
	})
}
