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
				r, bs, ids := claimedRun(t, db, w, tc.name, "old")
				// The run is taken over: another worker holds it now.
				if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = 'new' WHERE id = ?`, r.ID).Error; err != nil {
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
				// Then the run is in the state the late answer finds (the
				// new holder answered while it was still going).
				if err := db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, tc.runStatus, r.ID).Error; err != nil {
					t.Fatal(err)
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
				lates := lateCounts(t, db, r.ID)
				switch {
				case tc.event && len(lates) != 1:
					t.Errorf("%d late-count events, want 1: %+v", len(lates), lates)
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

// TestAnswerStoredAfterRunEndedHasLateCount: an answer stored on a run
// that has ended adds its calls, tokens, cost and scores to the run's
// figures after its end, whoever stores it: above all the worker that
// still holds a cancelled run (a cancel keeps the lease; its calls out
// come back and are stored under it). Its run's events say so, once
// (kind late_count), as for a late count by another worker, so that a
// report downloaded before is explained (regression: the holder's answers
// changed a cancelled run's figures with no event). An answer stored on a
// run still going writes none.
func TestAnswerStoredAfterRunEndedHasLateCount(t *testing.T) {
	type save func(ctx context.Context, db *models.DB, r models.BatchResult) error
	fenced := func(ctx context.Context, db *models.DB, r models.BatchResult) error {
		return db.SaveBatchResult(models.WithLeaseOwner(ctx, "holder/1"), r)
	}
	// As the runner stores it: in a group, with the lease handed on.
	group := func(ctx context.Context, db *models.DB, r models.BatchResult) error {
		return db.SaveBatchResults(ctx, []models.BatchSave{{Result: r, Owner: "holder/1", OnLease: func(models.LeaseState) {}}})[0]
	}
	unfenced := func(ctx context.Context, db *models.DB, r models.BatchResult) error {
		return db.SaveBatchResult(ctx, r)
	}
	cases := []struct {
		name      string
		runStatus string
		save      save
		replayed  bool // the answer replays its first call from the answer cache
		answered  bool // the batch has an answer already: this one is refused, and counted
		event     bool
		words     string // the event's message says so
	}{
		{name: "holder, run cancelled", runStatus: models.RunCancelled, save: fenced, event: true, words: "still out when the run was cancelled"},
		{name: "holder in a group, run cancelled", runStatus: models.RunCancelled, save: group, event: true, words: "still out when the run was cancelled"},
		{name: "holder replaying a paid call, run cancelled", runStatus: models.RunCancelled, save: fenced, replayed: true, event: true, words: "still out when the run was cancelled"},
		{name: "holder, answered already, run cancelled", runStatus: models.RunCancelled, save: fenced, answered: true, event: true, words: "It was paid for"},
		{name: "no lease, run failed", runStatus: models.RunFailed, save: unfenced, event: true, words: "after the run ended"},
		{name: "no lease, run finished", runStatus: models.RunSucceeded, save: unfenced, event: true, words: "after the run ended"},
		{name: "holder, run going", runStatus: models.RunRunning, save: fenced},
		{name: "holder in a group, run going", runStatus: models.RunRunning, save: group},
		{name: "holder, answered already, run going", runStatus: models.RunRunning, save: fenced, answered: true},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				r, bs, ids := claimedRun(t, db, w, tc.name, "holder/1")
				tag := strings.ReplaceAll(tc.name, " ", "_")
				result := func(v float64, calls int, paid ...models.PaidCall) models.BatchResult {
					b := bs[0]
					b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens = models.BatchDone, calls, calls, 100*calls, 10*calls
					b.Response = fmt.Sprintf("answer %g", v)
					cost := 0.001 * float64(calls)
					res := models.BatchResult{Batch: b, Cost: &cost, Paid: paid}
					for i, id := range ids {
						x := v + float64(i)
						res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: &x})
					}
					return res
				}
				call := func(id string, replayed bool) models.PaidCall {
					c := 0.001
					return models.PaidCall{ID: tag + "-" + id, PromptTokens: 100, CompletionTokens: 10, Cost: &c, Replayed: replayed}
				}
				if tc.answered {
					if err := fenced(ctx, db, result(1, 1, call("first", false))); err != nil {
						t.Fatal(err)
					}
				}
				// The run ends as the product ends it (a cancel keeps its
				// lease: the holder's calls out are still stored).
				if tc.runStatus == models.RunCancelled {
					if _, err := db.RequestCancel(ctx, w.ws.ID, r.ID); err != nil {
						t.Fatal(err)
					}
				} else if tc.runStatus != models.RunRunning {
					if err := db.FinishRun(models.WithLeaseOwner(ctx, "holder/1"), r.ID, tc.runStatus, ""); err != nil {
						t.Fatal(err)
					}
				}
				before, err := db.GetRun(ctx, r.ID)
				if err != nil || before.Status != tc.runStatus {
					t.Fatalf("run %s (%v), want %s", before.Status, err, tc.runStatus)
				}
				late := result(4, 2, call("a", tc.replayed), call("b", false))
				if tc.replayed {
					// Its first call was counted already, on its pending
					// batch, by the unit's earlier execution.
					if err := db.AddUnitSpend(models.WithLeaseOwner(ctx, "earlier/1"), r.ID, bs[0].ID, models.SpendOf(late.Paid[:1])); err != nil {
						t.Fatal(err)
					}
					before, _ = db.GetRun(ctx, r.ID)
					if err := db.Gorm.Where("run_id = ? AND kind = ?", r.ID, models.RunEventLateCount).Delete(&models.RunEvent{}).Error; err != nil {
						t.Fatal(err)
					}
				}
				for range 2 {
					// Written again (a retry whose commit was not
					// acknowledged): nothing more, no second event.
					err := tc.save(ctx, db, late)
					if tc.answered || err != nil {
						if models.ErrorCode(err) != models.EConflict {
							t.Fatalf("store: %v", err)
						}
					}
				}
				after, err := db.GetRun(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				wantCalls, wantPrompt, words := 2, 200, "2 calls, 200 prompt and 20 completion tokens, $0.002."
				if tc.replayed {
					wantCalls, wantPrompt, words = 1, 100, "1 call, 100 prompt and 10 completion tokens, $0.001."
				}
				if after.Calls != before.Calls+wantCalls || after.PromptTokens != before.PromptTokens+wantPrompt {
					t.Errorf("run counts %d calls, %d prompt tokens; want %d, %d (the answer counted once)",
						after.Calls, after.PromptTokens, before.Calls+wantCalls, before.PromptTokens+wantPrompt)
				}
				lates := lateCounts(t, db, r.ID)
				switch {
				case !tc.event && len(lates) != 0:
					t.Errorf("late-count events %+v on a run still going, want none", lates)
				case tc.event && len(lates) != 1:
					t.Fatalf("%d late-count events, want 1: %+v", len(lates), lates)
				case tc.event && (!strings.Contains(lates[0].Message, words) || !strings.Contains(lates[0].Message, tc.words) ||
					!strings.Contains(lates[0].Message, "downloaded before then do not include it")):
					t.Errorf("late-count event %q, want it to say %q and %q, and that reports downloaded before do not include it", lates[0].Message, tc.words, words)
				}
				if tc.event && strings.Contains(tc.name, "holder") && lates[0].Worker != "holder/1" {
					t.Errorf("late-count event by worker %q, want holder/1", lates[0].Worker)
				}
			})
		}
	})
}

// TestStoredLateCountWrittenOnceOnPostgres: on PostgreSQL the event of an
// answer stored after its run ended is a write of its own, after the
// answer's statement; written again (a retry whose commit was not
// acknowledged), it is not written twice.
func TestStoredLateCountWrittenOnceOnPostgres(t *testing.T) {
	db := dbtest.Open(t, models.Postgres)
	w := newWorld(t, db)
	ctx := context.Background()
	r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
		JudgeID: &w.judge.ID, Name: "cancelled", Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
		JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
	if err := db.CreateRun(ctx, &r, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	add := models.UnitSpend{Calls: 1, PromptTokens: 100, CompletionTokens: 10}
	for range 2 {
		if err := db.WriteStoredLateCountPG(ctx, r.ID, 7, "holder/1", models.RunCancelled, add, at); err != nil {
			t.Fatal(err)
		}
	}
	// Another answer's, at the same moment: an event of its own.
	if err := db.WriteStoredLateCountPG(ctx, r.ID, 8, "holder/1", models.RunCancelled, add, at); err != nil {
		t.Fatal(err)
	}
	evs, err := db.RunEvents(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || !strings.Contains(evs[0].Message, "(batch 7)") || !strings.Contains(evs[1].Message, "(batch 8)") {
		t.Errorf("events %+v, want one for batch 7 and one for batch 8", evs)
	}
}

// claimedRun makes a BatchEval run named name with one batch of two
// samples (its round 0), claimed by owner; it returns the run, its
// batches and the batch's row ids.
func claimedRun(t *testing.T, db *models.DB, w *world, name, owner string) (models.Run, []models.RunBatch, []int64) {
	t.Helper()
	return claimedRunWith(t, db, w, name, owner, nil)
}

// claimedRunWith is claimedRun with change, when not nil, made to the run
// before it is stored (its judge, say).
func claimedRunWith(t *testing.T, db *models.DB, w *world, name, owner string, change func(*models.Run)) (models.Run, []models.RunBatch, []int64) {
	t.Helper()
	ctx := context.Background()
	r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
		JudgeID: &w.judge.ID, Name: name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
		JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
	if change != nil {
		change(&r)
	}
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
	if ok, err := db.ClaimRun(ctx, r.ID, owner, time.Minute); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return r, bs, ids
}

// TestLateCountNamesBatchAsPagesDo: a run cancelled from one server process
// while another held it: the holder's calls still out came back and the
// Run history said so "(batch 473)", the batch's database id, where the
// run's batches list numbers that batch "Batch 2, round 2" of its
// criterion. The event now names the batch as the pages do, whichever way
// the answer was counted (stored, or refused as answered already and
// counted as paid).
func TestLateCountNamesBatchAsPagesDo(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		for _, answered := range []bool{false, true} {
			t.Run(fmt.Sprintf("answered already %v", answered), func(t *testing.T) {
				ctx := models.WithLeaseOwner(context.Background(), "holder/1")
				r, bs, ids := claimedRun(t, db, w, fmt.Sprintf("cancelled %v", answered), "holder/1")
				result := func(v float64, id string) models.BatchResult {
					b := bs[0]
					b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens = models.BatchDone, 1, 1, 100, 10
					c := 0.001
					res := models.BatchResult{Batch: b, Cost: &c, Paid: []models.PaidCall{{ID: fmt.Sprintf("%d-%s", r.ID, id), PromptTokens: 100, CompletionTokens: 10, Cost: &c}}}
					for i, row := range ids {
						x := v + float64(i)
						res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: row, Label: i + 1, Score: &x})
					}
					return res
				}
				if answered {
					if err := db.SaveBatchResult(ctx, result(1, "first")); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := db.RequestCancel(context.Background(), w.ws.ID, r.ID); err != nil {
					t.Fatal(err)
				}
				if err := db.SaveBatchResult(ctx, result(2, "late")); err != nil && models.ErrorCode(err) != models.EConflict {
					t.Fatal(err)
				}
				lates := lateCounts(t, db, r.ID)
				if len(lates) != 1 {
					t.Fatalf("%d late-count events, want 1: %+v", len(lates), lates)
				}
				want := fmt.Sprintf("(batch 1 of round 1, criterion %q)", r.RubricSnapshot.Criteria[0].Name)
				if msg := lates[0].Message; !strings.Contains(msg, want) || strings.Contains(msg, fmt.Sprintf("(batch %d)", bs[0].ID)) {
					t.Errorf("late-count event %q, want it to name the batch %s, not by its id %d", msg, want, bs[0].ID)
				}
			})
		}
	})
}
