package models_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestSaveLateBatchResult: an answer that comes back after its worker lost
// the run's lease is refused by the fenced write, and then stored by the
// late write only where that is safe: a complete answer, a run still going,
// a batch still without an answer.
func TestSaveLateBatchResult(t *testing.T) {
	cases := []struct {
		name      string
		runStatus string // the run's status when the late answer arrives
		answered  bool   // the new holder answered the batch first
		status    string // the late answer's batch status
		want      func(error) bool
		stored    bool // the late answer is the batch's answer
		// counted: refused, but its calls and tokens count on the run
		// (it was paid for), in the transaction that refused it
		counted bool
		// event: the count landed after the run ended, and the run's
		// events say so (once)
		event bool
	}{
		{name: "still pending", runStatus: models.RunRunning, status: models.BatchDone,
			want: func(err error) bool { return err == nil }, stored: true},
		{name: "run queued again", runStatus: models.RunQueued, status: models.BatchDone,
			want: func(err error) bool { return err == nil }, stored: true},
		{name: "new holder answered first", runStatus: models.RunRunning, answered: true, status: models.BatchDone,
			want: func(err error) bool { return models.ErrorCode(err) == models.EConflict }, counted: true},
		// A run paused while the answer was on its way keeps it: Continue
		// must not pay for that batch again.
		{name: "run paused", runStatus: models.RunPaused, status: models.BatchDone,
			want: func(err error) bool { return err == nil }, stored: true},
		// Its batch still pending when the run ended (cancelled, failed,
		// or finished without it): not stored, but paid for, so counted
		// (it used to be dropped uncounted), and the run's events say its
		// figures changed after its end.
		{name: "run cancelled", runStatus: models.RunCancelled, status: models.BatchDone,
			want: func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }, counted: true, event: true},
		{name: "run failed", runStatus: models.RunFailed, status: models.BatchDone,
			want: func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }, counted: true, event: true},
		{name: "run finished with gaps", runStatus: models.RunFinishedWithGaps, status: models.BatchDone,
			want: func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }, counted: true, event: true},
		// The run was stopped, or finished, while the call was out: the
		// answer was paid for and is counted (it used to be dropped).
		{name: "run cancelled after the new holder answered", runStatus: models.RunCancelled, answered: true, status: models.BatchDone,
			want: func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }, counted: true, event: true},
		{name: "run finished after the new holder answered", runStatus: models.RunSucceeded, answered: true, status: models.BatchDone,
			want: func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }, counted: true, event: true},
		{name: "failed answer left to the new holder", runStatus: models.RunRunning, status: models.BatchFailed,
			want: func(err error) bool { return models.ErrorCode(err) == models.EInvalid }},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
					JudgeID: &w.judge.ID, Name: tc.name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
					JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
				if err := db.CreateRun(ctx, &r, nil); err != nil {
					t.Fatal(err)
				}
				rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 2)
				if err != nil || len(rows) < 2 {
					t.Fatalf("rows: %v", err)
				}
				ids := []int64{rows[0].ID, rows[1].ID}
				bs, err := db.CreateRoundBatches(ctx, r.ID, 0, 0, [][]int64{ids})
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := db.ClaimRun(ctx, r.ID, "old", time.Minute); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				// The run is taken over: another worker holds it now.
				if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = 'new', status = ? WHERE id = ?`, tc.runStatus, r.ID).Error; err != nil {
					t.Fatal(err)
				}
				result := func(v float64, calls int, status string) models.BatchResult {
					b := bs[0]
					b.Status, b.Calls, b.Attempts, b.PromptTokens = status, calls, calls, 100*calls
					res := models.BatchResult{Batch: b}
					// Each call has its identity, as the answer cache names it.
					for k := range calls {
						res.Paid = append(res.Paid, models.PaidCall{ID: fmt.Sprintf("%s-%g-%d", strings.ReplaceAll(tc.name, " ", "_"), v, k), PromptTokens: 100})
					}
					for i, id := range ids {
						var sc *float64
						if status == models.BatchDone {
							x := v + float64(i)
							sc = &x
						}
						res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: sc})
					}
					return res
				}
				if tc.answered {
					if err := db.SaveBatchResult(models.WithLeaseOwner(ctx, "new"), result(1, 1, models.BatchDone)); err != nil {
						t.Fatal(err)
					}
				}
				before, err := db.GetRun(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				late := result(4, 2, tc.status)
				oldCtx := models.WithLeaseOwner(ctx, "old")
				if err := db.SaveBatchResult(oldCtx, late); !errors.Is(err, models.ErrLeaseLost) {
					t.Fatalf("fenced write by the old holder: %v, want ErrLeaseLost", err)
				}
				err = db.SaveLateBatchResult(oldCtx, late)
				if !tc.want(err) {
					t.Fatalf("late write: %v", err)
				}
				if tc.counted {
					// Written again (a retry whose commit was not
					// acknowledged): it counts nothing more.
					if err := db.SaveLateBatchResult(oldCtx, late); !tc.want(err) {
						t.Fatalf("late write again: %v", err)
					}
				}
				evs, err := db.RunEvents(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				var lates []models.RunEvent
				for _, ev := range evs {
					if ev.Kind == models.RunEventLateCount {
						lates = append(lates, ev)
					}
				}
				switch {
				case tc.event && len(lates) != 1:
					t.Errorf("%d late-count events, want 1: %+v", len(lates), evs)
				case tc.event && (!strings.Contains(lates[0].Message, "2 calls, 200 prompt") || lates[0].Worker != "old"):
					t.Errorf("late-count event %+v, want it to name worker old and the 2 calls, 200 prompt tokens added", lates[0])
				case !tc.event && len(lates) != 0:
					t.Errorf("late-count events %+v on a run still going, want none", lates)
				}
				after, err := db.GetRun(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				var b models.RunBatch
				if err := db.Gorm.First(&b, bs[0].ID).Error; err != nil {
					t.Fatal(err)
				}
				var scores []models.RunScore
				if err := db.Gorm.Where("batch_id = ?", b.ID).Order("label").Find(&scores).Error; err != nil {
					t.Fatal(err)
				}
				if tc.stored {
					if b.Status != models.BatchDone || b.Calls != 2 || len(scores) != 2 || scores[0].Score == nil || *scores[0].Score != 4 {
						t.Errorf("batch %s with %d calls and scores %v, want the late answer stored", b.Status, b.Calls, scores)
					}
					if after.BatchesDone != before.BatchesDone+1 || after.Calls != before.Calls+2 || after.PromptTokens != before.PromptTokens+200 {
						t.Errorf("run counts %d done, %d calls, %d tokens; want the late answer counted once", after.BatchesDone, after.Calls, after.PromptTokens)
					}
				} else {
					wantCalls, wantTokens := before.Calls, before.PromptTokens
					if tc.counted {
						wantCalls, wantTokens = wantCalls+2, wantTokens+200
					}
					if after.BatchesDone != before.BatchesDone || after.Calls != wantCalls || after.PromptTokens != wantTokens {
						t.Errorf("run counters %d->%d done, %d->%d calls, %d->%d tokens for a refused late answer; want %d done, %d calls, %d tokens",
							before.BatchesDone, after.BatchesDone, before.Calls, after.Calls, before.PromptTokens, after.PromptTokens, before.BatchesDone, wantCalls, wantTokens)
					}
					for _, s := range scores {
						if s.Score != nil && *s.Score >= 4 {
							t.Errorf("refused late answer's score %g stored", *s.Score)
						}
					}
				}
				if after.LeaseOwner != "new" || after.Status != tc.runStatus {
					t.Errorf("run %s owned by %q after the late write, want %s owned by the new holder", after.Status, after.LeaseOwner, tc.runStatus)
				}
			})
		}
	})
}
