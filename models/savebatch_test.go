package models_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestSaveBatchResultRows: the answer store, written as fixed SQL without
// GORM, writes what the GORM version wrote, read back through GORM: every
// field of the batch, each score (a missing one as NULL, never 0) with its
// analysis, and the run's counters, cost included only when known; a
// fenced write by a worker that lost the lease stores nothing.
func TestSaveBatchResultRows(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name     string
		status   string
		scores   []*float64
		cost     *float64
		owner    string // the writer's lease owner; "" unfenced
		holder   string // the run's lease owner when the answer is stored
		wantErr  error
		wantCost *float64
	}{
		{name: "answer with a missing score and a cost", status: models.BatchDone, scores: []*float64{f(1.5), nil, f(0)},
			cost: f(0.25), wantCost: f(0.25)},
		{name: "failed batch, price unknown", status: models.BatchFailed, scores: []*float64{nil, nil, nil}},
		{name: "fenced writer holding the lease", status: models.BatchDone, scores: []*float64{f(2), f(1), f(2)},
			owner: "w1", holder: "w1", cost: f(0.5), wantCost: f(0.5)},
		{name: "fenced writer that lost the lease", status: models.BatchDone, scores: []*float64{f(2), f(1), f(2)},
			owner: "w1", holder: "w2", cost: f(0.5), wantErr: models.ErrLeaseLost},
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
				rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 3)
				if err != nil || len(rows) < 3 {
					t.Fatalf("rows: %v", err)
				}
				ids := []int64{rows[0].ID, rows[1].ID, rows[2].ID}
				bs, err := db.CreateRoundBatches(ctx, r.ID, 0, 0, [][]int64{ids})
				if err != nil {
					t.Fatal(err)
				}
				if tc.holder != "" {
					if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, tc.holder, models.RunRunning, r.ID).Error; err != nil {
						t.Fatal(err)
					}
				}
				b := bs[0]
				b.Status, b.Request, b.Response = tc.status, `[{"role":"user","content":"rate"}]`, "Sample1: 1.5 <'\"quoted\">"
				b.RepairRequest, b.RepairResponse = "repair?", "repaired"
				b.Problems = []string{"Sample2: no score"}
				b.Details = map[string]any{"retried": true}
				b.PromptTokens, b.CompletionTokens, b.LatencyMS, b.Attempts, b.Calls = 120, 30, 42, 3, 2
				if tc.status == models.BatchFailed {
					b.Error, b.ErrorKind = "judge said no", "server"
				}
				res := models.BatchResult{Batch: b, Cost: tc.cost}
				for i, v := range tc.scores {
					res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: b.ID, CriterionIndex: 0, Round: 0,
						RowID: ids[i], Label: i + 1, Score: v, Analysis: "why " + string(rune('a'+i))})
				}
				sctx := ctx
				if tc.owner != "" {
					sctx = models.WithLeaseOwner(ctx, tc.owner)
				}
				before := time.Now().UTC().Add(-time.Second)
				err = db.SaveBatchResult(sctx, res)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("SaveBatchResult = %v, want %v", err, tc.wantErr)
					}
					got, _ := db.FindBatch(ctx, r.ID, b.ID)
					scores, _ := db.ListScores(ctx, r.ID)
					run := getRun(t, db, r.ID)
					if got.Status != models.BatchPending || len(scores) != 0 || run.BatchesDone != 0 || run.Calls != 0 {
						t.Errorf("refused write left batch %s, %d scores, %d batches done, %d calls; want nothing stored",
							got.Status, len(scores), run.BatchesDone, run.Calls)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got, err := db.FindBatch(ctx, r.ID, b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.DoneAt == nil || got.DoneAt.Before(before) || got.DoneAt.After(time.Now().Add(time.Second)) {
					t.Errorf("done_at = %v, want about now", got.DoneAt)
				}
				want := b
				want.DoneAt = got.DoneAt
				if !reflect.DeepEqual(got, want) {
					t.Errorf("stored batch\n got %+v\nwant %+v", got, want)
				}
				scores, err := db.ListScores(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(scores) != len(res.Scores) {
					t.Fatalf("%d scores stored, want %d", len(scores), len(res.Scores))
				}
				for i, s := range scores {
					w := res.Scores[i]
					w.ID = s.ID
					if !reflect.DeepEqual(s, w) {
						t.Errorf("score %d\n got %+v\nwant %+v", i, s, w)
					}
				}
				run := getRun(t, db, r.ID)
				missing := 0
				for _, v := range tc.scores {
					if v == nil {
						missing++
					}
				}
				failed := 0
				if tc.status == models.BatchFailed {
					failed = 1
				}
				if run.BatchesDone != 1 || run.BatchesFailed != failed || run.MissingScores != missing || run.Calls != 2 ||
					run.PromptTokens != 120 || run.CompletionTokens != 30 || run.Retries != 0 {
					// Retries are counted as the attempts fail (AddRunRetries),
					// not again with the answer.
					t.Errorf("run counters: done %d failed %d missing %d calls %d tokens %d/%d retries %d; want 1 %d %d 2 120/30 0",
						run.BatchesDone, run.BatchesFailed, run.MissingScores, run.Calls, run.PromptTokens, run.CompletionTokens, run.Retries, failed, missing)
				}
				if total, miss, err := db.ScoreCounts(ctx, r.ID); err != nil || total != int64(len(tc.scores)) || miss != int64(missing) {
					t.Errorf("ScoreCounts = %d, %d, %v; want %d scores, %d missing", total, miss, err, len(tc.scores), missing)
				}
				if !reflect.DeepEqual(run.CostUSD, tc.wantCost) {
					t.Errorf("run cost %v, want %v", deref(run.CostUSD), deref(tc.wantCost))
				}
				// The same batch again: a conflict, nothing counted twice.
				if err := db.SaveBatchResult(sctx, res); models.ErrorCode(err) != models.EConflict {
					t.Errorf("second store = %v, want a conflict", err)
				}
				if again := getRun(t, db, r.ID); again.BatchesDone != 1 {
					t.Errorf("second store counted: %d batches done", again.BatchesDone)
				}
			})
		}
	})
}

func getRun(t *testing.T, db *models.DB, id int64) models.Run {
	t.Helper()
	r, err := db.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSaveBatchResultsGroup: answers stored together in one transaction
// (the SQLite group commit) each get their own outcome: stored, refused
// because the batch has an answer (a conflict), or refused because the
// writer lost the run's lease; a refused answer writes nothing but, on a
// conflict, its calls and tokens (it was paid for), and the others are
// stored with their counters.
func TestSaveBatchResultsGroup(t *testing.T) {
	type entry struct {
		run      int    // which of the two runs
		batch    int    // which of its batches
		owner    string // the writer's lease owner
		wantCode func(error) bool
		stored   bool
	}
	ok := func(err error) bool { return err == nil }
	conflict := func(err error) bool { return models.ErrorCode(err) == models.EConflict }
	lost := func(err error) bool { return errors.Is(err, models.ErrLeaseLost) }
	cases := []struct {
		name    string
		entries []entry
	}{
		{"all stored", []entry{{0, 0, "w0", ok, true}, {0, 1, "w0", ok, true}, {1, 0, "w1", ok, true}}},
		{"a conflict among them", []entry{{0, 0, "w0", ok, true}, {0, 0, "w0", conflict, false}, {1, 1, "", ok, true}}},
		{"a writer that lost its lease", []entry{{0, 0, "w0", ok, true}, {1, 0, "old", lost, false}, {1, 1, "w1", ok, true}}},
		// run -1: an answer of a run deleted meanwhile is refused alone.
		{"a run that no longer exists", []entry{{0, 0, "w0", ok, true}, {-1, 0, "w9", lost, false}, {1, 1, "w1", ok, true}}},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 2)
		if err != nil || len(rows) < 2 {
			t.Fatalf("rows: %v", err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var runs [2]models.Run
				var batches [2][]models.RunBatch
				for i := range runs {
					runs[i] = models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID,
						Name: tc.name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(), JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
					if err := db.CreateRun(ctx, &runs[i], nil); err != nil {
						t.Fatal(err)
					}
					if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, fmt.Sprintf("w%d", i), models.RunRunning, runs[i].ID).Error; err != nil {
						t.Fatal(err)
					}
					bs, err := db.CreateRoundBatches(ctx, runs[i].ID, 0, 0, [][]int64{{rows[0].ID}, {rows[1].ID}})
					if err != nil {
						t.Fatal(err)
					}
					batches[i] = bs
				}
				var items []models.BatchSave
				seen := make([]*models.LeaseState, len(tc.entries))
				asked := time.Now()
				for k, e := range tc.entries {
					var b models.RunBatch
					if e.run < 0 {
						b = batches[0][e.batch]
						b.RunID = runs[1].ID + 1000 // no such run
					} else {
						b = batches[e.run][e.batch]
					}
					b.Status, b.Response, b.Calls, b.Attempts, b.PromptTokens = models.BatchDone, fmt.Sprintf("answer %d", k), 1, 1, 10
					v := float64(k)
					items = append(items, models.BatchSave{Owner: e.owner, Result: models.BatchResult{Batch: b,
						Scores: []models.RunScore{{RunID: b.RunID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &v}}},
						OnLease: func(st models.LeaseState) { seen[k] = &st }})
				}
				errs := db.SaveBatchResults(ctx, items)
				// A group is one transaction that reads each fenced
				// answer's lease and hands it on (the runner's next call
				// takes it for its fence); refused answers' too.
				for k, e := range tc.entries {
					st := seen[k]
					if e.owner == "" || e.run < 0 {
						continue
					}
					if st == nil {
						t.Errorf("answer %d: its write handed on no lease", k)
						continue
					}
					if owner := fmt.Sprintf("w%d", e.run); st.Owner != owner || st.Status != models.RunRunning || st.Began.Before(asked) {
						t.Errorf("answer %d: lease handed on as owner %q, status %q, read at %v (asked %v); want %q, running, after",
							k, st.Owner, st.Status, st.Began, asked, owner)
					}
				}
				want, paid := [2]int{}, [2]int{}
				for k, e := range tc.entries {
					if !e.wantCode(errs[k]) {
						t.Errorf("answer %d: error %v", k, errs[k])
					}
					if conflict(errs[k]) {
						paid[e.run]++
					}
					if !e.stored {
						continue
					}
					want[e.run]++
					paid[e.run]++
					b, err := db.FindBatch(ctx, runs[e.run].ID, items[k].Result.Batch.ID)
					if err != nil || b.Response != items[k].Result.Batch.Response || b.Status != models.BatchDone {
						t.Errorf("answer %d: batch stored as %q (%s), %v", k, b.Response, b.Status, err)
					}
				}
				for i, run := range runs {
					got := getRun(t, db, run.ID)
					scores, err := db.ListScores(ctx, run.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got.BatchesDone != want[i] || got.Calls != paid[i] || got.PromptTokens != 10*paid[i] || len(scores) != want[i] {
						t.Errorf("run %d: %d batches done, %d calls, %d tokens, %d scores; want %d answers stored, %d paid for",
							i, got.BatchesDone, got.Calls, got.PromptTokens, len(scores), want[i], paid[i])
					}
				}
			})
		}
	})
}

// TestCriterionScores: the scores BatchEval composes its next round from,
// by row and round, for one criterion only; a missing score stays nil.
func TestCriterionScores(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		r, rows := twoRowRun(t, db, "scores")
		a, b := rows[0].ID, rows[1].ID
		f := func(v float64) *float64 { return &v }
		// criterion, round, row ids and their scores
		stored := []struct {
			ci, round int
			scores    map[int64]*float64
		}{
			{0, 0, map[int64]*float64{a: f(1), b: nil}},
			{0, 1, map[int64]*float64{a: f(2), b: f(0)}},
			{1, 0, map[int64]*float64{a: f(9), b: f(9)}},
		}
		for _, st := range stored {
			bs, err := db.CreateRoundBatches(ctx, r.ID, st.ci, st.round, [][]int64{{a, b}})
			if err != nil {
				t.Fatal(err)
			}
			res := models.BatchResult{Batch: bs[0]}
			res.Batch.Status = models.BatchDone
			for k, id := range []int64{a, b} {
				res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: bs[0].ID, CriterionIndex: st.ci, Round: st.round, RowID: id, Label: k + 1, Score: st.scores[id]})
			}
			if err := db.SaveBatchResult(ctx, res); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.CriterionScores(ctx, r.ID, 0, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		show := func(m map[int64][]*float64) string {
			out := ""
			for _, id := range []int64{a, b} {
				out += fmt.Sprintf("%d:", id)
				for _, v := range m[id] {
					out += fmt.Sprintf(" %v", deref(v))
				}
				out += ";"
			}
			return fmt.Sprintf("%d rows: %s", len(m), out)
		}
		want := map[int64][]*float64{a: {f(1), f(2), nil}, b: {nil, f(0), nil}}
		if show(got) != show(want) {
			t.Errorf("CriterionScores = %s, want %s", show(got), show(want))
		}
		// From round 1: round 0 is left out.
		got, err = db.CriterionScores(ctx, r.ID, 0, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		want = map[int64][]*float64{a: {nil, f(2), nil}, b: {nil, f(0), nil}}
		if show(got) != show(want) {
			t.Errorf("CriterionScores from round 1 = %s, want %s", show(got), show(want))
		}
	})
}

// TestCreateRoundBatchesRows: a round stored with fixed SQL reads back as
// the batches it was given (pending, no answer, ids by place, problems
// and details empty as GORM wrote them), with the plan set; storing the
// same round again keeps the first composition; a fenced writer that lost
// the run's lease stores nothing.
func TestCreateRoundBatchesRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
			JudgeID: &w.judge.ID, Name: "rounds", Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
			JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
		if err := db.CreateRun(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 3)
		if err != nil || len(rows) < 3 {
			t.Fatalf("rows: %v", err)
		}
		if got, err := db.RoundBatches(ctx, r.ID, 1, 2); err != nil || len(got) != 0 {
			t.Fatalf("RoundBatches of a round not stored = %v, %v; want none", got, err)
		}
		plan := [][]int64{{rows[2].ID, rows[0].ID}, {rows[1].ID}, {rows[0].ID, rows[1].ID, rows[2].ID}}
		bs, err := db.CreateRoundBatches(ctx, r.ID, 1, 2, plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetRunPlan(ctx, r.ID, 9, 1, 2); err != nil {
			t.Fatal(err)
		}
		stored, err := db.RoundBatches(ctx, r.ID, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored, bs) {
			t.Fatalf("stored round\n got %+v\nwant %+v", stored, bs)
		}
		seen := map[int64]bool{}
		for i, b := range stored {
			want := models.RunBatch{ID: b.ID, RunID: r.ID, CriterionIndex: 1, Round: 2, BatchIndex: i, RowIDs: plan[i],
				Status: models.BatchPending, Problems: []string{}, Details: map[string]any{}}
			if b.ID == 0 || seen[b.ID] || !reflect.DeepEqual(b, want) {
				t.Errorf("batch %d\n got %+v\nwant %+v", i, b, want)
			}
			seen[b.ID] = true
		}
		if run := getRun(t, db, r.ID); run.BatchesTotal != 9 || run.CurrentCriterion != 1 || run.CurrentRound != 2 {
			t.Errorf("plan: %d batches, criterion %d, round %d; want 9, 1, 2", run.BatchesTotal, run.CurrentCriterion, run.CurrentRound)
		}
		again, err := db.CreateRoundBatches(ctx, r.ID, 1, 2, [][]int64{{rows[0].ID}})
		if err != nil || !reflect.DeepEqual(again, bs) {
			t.Errorf("the same round again = %+v, %v; want the first composition %+v", again, err, bs)
		}

		if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, "w2", models.RunRunning, r.ID).Error; err != nil {
			t.Fatal(err)
		}
		lost := models.WithLeaseOwner(ctx, "w1")
		if _, err := db.CreateRoundBatches(lost, r.ID, 1, 3, plan); !errors.Is(err, models.ErrLeaseLost) {
			t.Errorf("fenced round by a lost lease = %v, want ErrLeaseLost", err)
		}
		if err := db.SetRunPlan(lost, r.ID, 12, 1, 3); !errors.Is(err, models.ErrLeaseLost) {
			t.Errorf("fenced plan by a lost lease = %v, want ErrLeaseLost", err)
		}
		if got, _ := db.RoundBatches(ctx, r.ID, 1, 3); len(got) != 0 {
			t.Errorf("a lost lease stored %d batches", len(got))
		}
		if run := getRun(t, db, r.ID); run.BatchesTotal != 9 || run.CurrentRound != 2 {
			t.Errorf("a lost lease set the plan to %d batches, round %d", run.BatchesTotal, run.CurrentRound)
		}
		if _, err := db.CreateRoundBatches(models.WithLeaseOwner(ctx, "w2"), r.ID, 1, 3, plan); err != nil {
			t.Errorf("fenced round by the holder: %v", err)
		}
	})
}

// TestOneAnswerHandsOnItsLease: an answer saved alone with OnLease gives
// the run's lease as its write found it (status and expiry, for the
// runner's next fence), whichever way the dialect writes it; a writer
// that lost the lease stores nothing and gets ErrLeaseLost.
func TestOneAnswerHandsOnItsLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		run, rows := twoRowRun(t, db, "alone")
		until := time.Now().UTC().Add(time.Minute).Truncate(time.Millisecond)
		if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ?, lease_until = ? WHERE id = ?`, "w1", models.RunCancelled, until, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		bs, err := db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{{rows[0].ID}, {rows[1].ID}})
		if err != nil {
			t.Fatal(err)
		}
		save := func(b models.RunBatch, owner string) (*models.LeaseState, error) {
			b.Status, b.Response, b.Calls = models.BatchDone, "Sample1: 2", 1
			v := 2.0
			var seen *models.LeaseState
			err := db.SaveBatchResults(ctx, []models.BatchSave{{Owner: owner, OnLease: func(st models.LeaseState) { seen = &st },
				Result: models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &v}}}}})[0]
			return seen, err
		}
		asked := time.Now()
		st, err := save(bs[0], "w1")
		if err != nil {
			t.Fatal(err)
		}
		if st == nil {
			t.Fatal("the write handed on no lease")
		}
		// Cancelled while the call was out: the answer is kept (paid for),
		// and the lease handed on says the run is no longer running.
		if st.Owner != "w1" || st.Status != models.RunCancelled || st.Until == nil || !st.Until.Equal(until) || st.Began.Before(asked) {
			t.Errorf("lease handed on: owner %q, status %q, until %v, read at %v; want w1, cancelled, %v, after %v",
				st.Owner, st.Status, st.Until, st.Began, until, asked)
		}
		if _, err := save(bs[1], "w0"); !errors.Is(err, models.ErrLeaseLost) {
			t.Errorf("a writer that lost the lease: %v, want ErrLeaseLost", err)
		}
		if got := getRun(t, db, run.ID); got.BatchesDone != 1 {
			t.Errorf("%d batches counted, want the first answer's only", got.BatchesDone)
		}
	})
}

// twoRowRun stores a BatchEval run (not launched) of a new world's
// dataset and returns it with two of the dataset's rows.
func twoRowRun(t *testing.T, db *models.DB, name string) (models.Run, []models.DatasetRow) {
	t.Helper()
	w := newWorld(t, db)
	ctx := context.Background()
	rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 2)
	if err != nil || len(rows) < 2 {
		t.Fatalf("rows: %v", err)
	}
	r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, Name: name,
		Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(), JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
	if err := db.CreateRun(ctx, &r, nil); err != nil {
		t.Fatal(err)
	}
	return r, rows
}

// TestGroupFallbackHandsOnItsLease: a group that fails as a whole (here:
// one of its answers scores a row the other one already scored in the
// same round, a database error) is stored one by one; the other answer,
// which asks for its lease (OnLease), is still stored and hands on the
// lease, whichever dialect writes it (on SQLite that is the counters'
// UPDATE ... RETURNING, reached only here; PostgreSQL stores each answer
// alone anyway).
func TestGroupFallbackHandsOnItsLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		run, rows := twoRowRun(t, db, "fallback")
		until := time.Now().UTC().Add(time.Minute).Truncate(time.Millisecond)
		if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ?, lease_until = ? WHERE id = ?`, "w1", models.RunRunning, until, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		bs, err := db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{{rows[0].ID}, {rows[1].ID}})
		if err != nil {
			t.Fatal(err)
		}
		var seenBad, seenOK *models.LeaseState
		told := 0 // the good answer's lease reads: the group's, then its own
		item := func(b models.RunBatch, seen **models.LeaseState) models.BatchSave {
			b.Status, b.Response, b.Calls = models.BatchDone, "Sample1: 2", 1
			v := 2.0
			return models.BatchSave{Owner: "w1", OnLease: func(st models.LeaseState) {
				if seen == &seenOK {
					told++
				}
				*seen = &st
			},
				Result: models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: b.RunID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &v}}}}
		}
		bad := item(bs[1], &seenBad)
		bad.Result.Scores[0].RowID = rows[0].ID // bs[0]'s row: the group fails
		errs := db.SaveBatchResults(ctx, []models.BatchSave{item(bs[0], &seenOK), bad})
		if errs[0] != nil || errs[1] == nil {
			t.Errorf("after the group failed: %v for the good answer, %v for the bad one; want it stored, and an error", errs[0], errs[1])
		}
		if got := getRun(t, db, run.ID); got.BatchesDone != 1 {
			t.Errorf("%d batches counted, want 1", got.BatchesDone)
		}
		// On SQLite the group's transaction read the lease before it
		// failed; PostgreSQL writes each answer in a statement of its own.
		want := map[models.Dialect]int{models.SQLite: 2, models.Postgres: 1}[db.Dialect]
		if told != want {
			t.Errorf("the good answer handed on its lease %d times, want %d", told, want)
		}
		if seenOK == nil || seenOK.Until == nil || !seenOK.Until.Equal(until) || seenOK.Status != models.RunRunning {
			t.Errorf("lease handed on by the one-by-one write: %+v, want running until %v", seenOK, until)
		}
	})
}

// TestAnswerCacheCopiesStoredWithAnswers: the answer cache's copies that
// travel with a group of answers are stored whatever becomes of the
// answers (the judge was paid either way): with an answer stored, refused
// for a lost lease, refused as answered already, failing with a database
// error, and with no answer at all. A refused answer stores nothing of
// its own.
func TestAnswerCacheCopiesStoredWithAnswers(t *testing.T) {
	cases := []struct {
		name    string
		holder  string // the run's lease owner; the writer is "w1"
		answers int    // answers in the group before the copy (0 or 1)
		pre     bool   // the batch has its answer already
		broken  bool   // the answer scores a row twice: a database error
		wantErr error  // nil, ErrLeaseLost, or a conflict (EConflict)
		stored  bool   // the answer's batch counted
	}{
		{name: "answer stored", holder: "w1", answers: 1, stored: true},
		{name: "lease lost", holder: "w2", answers: 1, wantErr: models.ErrLeaseLost},
		{name: "answered already", holder: "w1", answers: 1, pre: true, wantErr: models.Errorf(models.EConflict, "")},
		{name: "database error", holder: "w1", answers: 1, broken: true, wantErr: errors.New("any")},
		{name: "no answer", holder: "w1"},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		for n, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				run, rows := twoRowRun(t, db, tc.name)
				if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, tc.holder, models.RunRunning, run.ID).Error; err != nil {
					t.Fatal(err)
				}
				bs, err := db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{{rows[0].ID, rows[1].ID}})
				if err != nil {
					t.Fatal(err)
				}
				answer := func() models.BatchSave {
					b := bs[0]
					b.Status, b.Response, b.Calls, b.Attempts = models.BatchDone, "Sample1: 2\nSample2: 3", 1, 1
					v, w := 2.0, 3.0
					second := rows[1].ID
					if tc.broken {
						second = rows[0].ID
					}
					return models.BatchSave{Owner: "w1", Result: models.BatchResult{Batch: b, Scores: []models.RunScore{
						{RunID: run.ID, BatchID: b.ID, RowID: rows[0].ID, Label: 1, Score: &v},
						{RunID: run.ID, BatchID: b.ID, RowID: second, Label: 2, Score: &w}}}}
				}
				if tc.pre {
					if errs := db.SaveBatchResults(ctx, []models.BatchSave{answer()}); errs[0] != nil {
						t.Fatal(errs[0])
					}
				}
				// The run's own cache, as the runner's: the copy is
				// stored as this run's on every path (alone, in a group,
				// one by one after a group failed).
				cache := db.ResponseCache(run.WorkspaceID).ForRun(run.ID)
				hash := fmt.Sprintf("%064d", n)
				copyOf := cache.Answer(hash, 0, []byte(`{"choices":[]}`))
				var items []models.BatchSave
				if tc.answers > 0 {
					items = append(items, answer())
				}
				items = append(items, models.BatchSave{Cached: &copyOf})
				errs := db.SaveBatchResults(ctx, items)
				if tc.answers > 0 {
					err := errs[0]
					switch {
					case tc.wantErr == nil && err != nil:
						t.Errorf("answer: %v, want it stored", err)
					case tc.wantErr == nil:
					case errors.Is(tc.wantErr, models.ErrLeaseLost) && !errors.Is(err, models.ErrLeaseLost):
						t.Errorf("answer: %v, want a lost lease", err)
					case models.ErrorCode(tc.wantErr) == models.EConflict && models.ErrorCode(err) != models.EConflict:
						t.Errorf("answer: %v, want a conflict", err)
					case err == nil:
						t.Errorf("answer stored, want %v", tc.wantErr)
					}
				}
				if err := errs[len(errs)-1]; err != nil {
					t.Errorf("copy for the cache: %v", err)
				}
				got, ok, err := cache.LoadAnswer(ctx, hash, 0)
				if err != nil || !ok || string(got) != `{"choices":[]}` {
					t.Errorf("cache holds %q (found %v, %v), want the copy", got, ok, err)
				}
				var owner *int64
				if err := db.Gorm.Raw("SELECT run_id FROM judge_response_cache WHERE request_hash = ?", hash).Scan(&owner).Error; err != nil {
					t.Fatal(err)
				}
				if owner == nil || *owner != run.ID {
					t.Errorf("copy stored as run %v's, want run %d's", owner, run.ID)
				}
				want := 0
				if tc.stored || tc.pre {
					want = 1
				}
				if r := getRun(t, db, run.ID); r.BatchesDone != want {
					t.Errorf("%d batches counted, want %d", r.BatchesDone, want)
				}
			})
		}
	})
}
