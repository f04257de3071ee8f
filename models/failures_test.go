package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestFailedCallsReadByTheirIndex: a run's failure causes (FailureCauses)
// and its failed calls, all or of one cause, counted and paged
// (ListBatchSummaries), are those of the run's calls, and on SQLite every
// statement that asks for failed calls reads them through the partial
// indexes of failed calls (00039): before, each read every call of the run
// from its table row to see its status (0.4-0.6 s a page of the list at
// 200,000 calls).
func TestFailedCallsReadByTheirIndex(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		run := w.newRun(t, "failed calls")
		other := w.newRun(t, "other failed calls")
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 6)
		if err != nil || len(rows) < 6 {
			t.Fatalf("rows: %d, %v", len(rows), err)
		}
		// Two criteria, two rounds, six batches of one a round: every third
		// call failed, rate-limited or timed out by turns.
		kinds := []string{"rate_limit", "timeout", "rate_limit"}
		type place struct{ ci, round, b int }
		var failed []place
		byKind := map[string]int{}
		for _, r := range []models.Run{run, other} {
			n := 0
			for ci := range 2 {
				for round := range 2 {
					var groups [][]int64
					for _, row := range rows {
						groups = append(groups, []int64{row.ID})
					}
					bs, err := db.CreateRoundBatches(ctx, r.ID, ci, round, groups)
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range bs {
						res := models.BatchResult{Batch: b}
						res.Batch.Status = models.BatchDone
						if n%3 == 0 && r.ID == run.ID || n%4 == 1 && r.ID == other.ID {
							k := kinds[(n/3)%len(kinds)]
							res.Batch.Status, res.Batch.Error, res.Batch.ErrorKind = models.BatchFailed, "judge: "+k, k
							if r.ID == run.ID {
								failed = append(failed, place{ci, round, b.BatchIndex})
								byKind[k]++
							}
						}
						n++
						if err := db.SaveBatchResult(ctx, res); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}

		var mu sync.Mutex
		var stmts []explained
		explain := db.Dialect == models.SQLite
		if explain {
			for _, g := range []*gorm.DB{db.Gorm, db.Read} {
				if g == nil {
					continue
				}
				name := "test:explain_failed_batches"
				seen := func(tx *gorm.DB) {
					if q := tx.Statement.SQL.String(); strings.Contains(q, "run_batches") && strings.Contains(q, "status =") {
						mu.Lock()
						stmts = append(stmts, explained{q, slices.Clone(tx.Statement.Vars)})
						mu.Unlock()
					}
				}
				// Find and Count are queries; Scan (the causes) reads rows.
				if err := g.Callback().Query().After("gorm:query").Register(name, seen); err != nil {
					t.Fatal(err)
				}
				if err := g.Callback().Row().After("gorm:row").Register(name, seen); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = g.Callback().Query().Remove(name); _ = g.Callback().Row().Remove(name) })
			}
		}

		causes, err := db.FailureCauses(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range causes {
			got = append(got, fmt.Sprintf("%s %d %q", c.Kind, c.Calls, c.Example))
		}
		want := []string{fmt.Sprintf("rate_limit %d %q", byKind["rate_limit"], "judge: rate_limit"), fmt.Sprintf("timeout %d %q", byKind["timeout"], "judge: timeout")}
		if !slices.Equal(got, want) {
			t.Errorf("FailureCauses = %v, want %v", got, want)
		}
		for _, f := range []models.BatchFilter{{Failed: true}, {Failed: true, Kind: "timeout"}, {Failed: true, Offset: 2, Limit: 3}, {}} {
			bs, total, err := db.ListBatchSummaries(ctx, run.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			var all []place
			for _, p := range failed {
				if !f.Failed || f.Kind == "" || kinds[slices.Index(failed, p)%len(kinds)] == f.Kind {
					all = append(all, p)
				}
			}
			if !f.Failed {
				all = nil
				for ci := range 2 {
					for round := range 2 {
						for b := range rows[:6] {
							all = append(all, place{ci, round, b})
						}
					}
				}
			}
			wantPage := all[min(f.Offset, len(all)):]
			if f.Limit > 0 {
				wantPage = wantPage[:min(f.Limit, len(wantPage))]
			}
			var have []place
			for _, b := range bs {
				have = append(have, place{b.CriterionIndex, b.Round, b.BatchIndex})
				if b.RunID != run.ID || f.Failed && (b.Status != models.BatchFailed || f.Kind != "" && b.ErrorKind != f.Kind) {
					t.Errorf("filter %+v: batch %+v", f, b)
				}
			}
			if total != len(all) || !slices.Equal(have, wantPage) {
				t.Errorf("filter %+v: %d in all, page %v; want %d, %v", f, total, have, len(all), wantPage)
			}
		}

		if !explain {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(stmts) < 7 {
			t.Fatalf("%d statements on failed calls seen, want at least 7 (a count and a page for each of three filters, the causes)", len(stmts))
		}
		for _, s := range stmts {
			plan := strings.Join(queryPlan(t, db, s), "\n")
			if !strings.Contains(plan, "INDEX run_batches_failed") {
				t.Errorf("%s\nreads the failed calls without their index:\n%s", s.sql, plan)
			}
		}
	})
}
