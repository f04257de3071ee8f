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

// TestSampleAndBatchScoresReadBySeeks: the scores of one sample of a run
// (ListRowScores, the sample page) and of one batch (ListBatchScores, the
// sample and batch pages) come back complete and in order, and on SQLite
// every statement reaching run_scores seeks with more than the run's id:
// before, both used run_scores_place for run_id alone and read every score
// of the run (0.3-1 s a sample page at 100,000 samples).
func TestSampleAndBatchScoresReadBySeeks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		run := w.newRun(t, "scores by seeks")
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 6)
		if err != nil || len(rows) < 6 {
			t.Fatalf("rows: %d, %v", len(rows), err)
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		// Two criteria, three rounds; two batches of three a round, the
		// halves swapped in odd rounds so a sample changes batch.
		score := func(ci, round, k int) float64 { return float64(ci*100 + round*10 + k) }
		batchOf := map[[3]int]int64{} // [criterion, round, row index] -> batch
		for ci := range 2 {
			for round := range 3 {
				first, second := ids[:3], ids[3:]
				if round%2 == 1 {
					first, second = second, first
				}
				bs, err := db.CreateRoundBatches(ctx, run.ID, ci, round, [][]int64{first, second})
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range bs {
					res := models.BatchResult{Batch: b}
					res.Batch.Status = models.BatchDone
					for label, id := range b.RowIDs {
						k := slices.Index(ids, id)
						v := score(ci, round, k)
						res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: ci, Round: round,
							RowID: id, Label: label + 1, Score: &v})
						batchOf[[3]int{ci, round, k}] = b.ID
					}
					if err := db.SaveBatchResult(ctx, res); err != nil {
						t.Fatal(err)
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
				name := "test:explain_run_scores"
				if err := g.Callback().Query().After("gorm:query").Register(name, func(tx *gorm.DB) {
					if q := tx.Statement.SQL.String(); strings.Contains(q, "run_scores") {
						mu.Lock()
						stmts = append(stmts, explained{q, slices.Clone(tx.Statement.Vars)})
						mu.Unlock()
					}
				}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = g.Callback().Query().Remove(name) })
			}
		}

		for k, id := range ids {
			got, err := db.ListRowScores(ctx, run.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			var want, have []string
			for ci := range 2 {
				for round := range 3 {
					want = append(want, fmt.Sprintf("c%d r%d %g batch %d", ci, round, score(ci, round, k), batchOf[[3]int{ci, round, k}]))
				}
			}
			for _, s := range got {
				have = append(have, fmt.Sprintf("c%d r%d %g batch %d", s.CriterionIndex, s.Round, *s.Score, s.BatchID))
			}
			if !slices.Equal(have, want) {
				t.Errorf("ListRowScores(row %d) = %v, want %v", k, have, want)
			}
		}
		other := w.newRun(t, "no scores")
		if got, err := db.ListRowScores(ctx, other.ID, ids[0]); err != nil || len(got) != 0 {
			t.Errorf("ListRowScores of a run without scores = %d scores, %v; want none", len(got), err)
		}

		b := batchOf[[3]int{1, 1, 0}] // criterion 1, round 1: rows 3-5 then 0-2
		got, err := db.ListBatchScores(ctx, run.ID, b)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, s := range got {
			labels = append(labels, fmt.Sprintf("%d:%g", s.Label, *s.Score))
		}
		if want := []string{"1:110", "2:111", "3:112"}; !slices.Equal(labels, want) {
			t.Errorf("ListBatchScores = %v, want %v", labels, want)
		}
		if got, err := db.ListBatchScores(ctx, other.ID, b); err != nil || len(got) != 0 {
			t.Errorf("ListBatchScores of another run's batch = %d scores, %v; want none", len(got), err)
		}

		if !explain {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(stmts) == 0 {
			t.Fatal("no statement on run_scores was seen")
		}
		for _, s := range stmts {
			plan := queryPlan(t, db, s)
			for _, line := range plan {
				if !strings.Contains(line, "run_scores") {
					continue
				}
				// A full scan, or a seek on the run's id alone, reads
				// every score of the run.
				if strings.HasPrefix(line, "SCAN") || strings.HasSuffix(line, "(run_id=?)") {
					t.Errorf("%s\nreads every score of the run: %s", s.sql, line)
				}
			}
		}
	})
}

type explained struct {
	sql  string
	vars []any
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of a statement, one line a step.
func queryPlan(t *testing.T, db *models.DB, s explained) []string {
	t.Helper()
	rs, err := db.SQL.Query("EXPLAIN QUERY PLAN "+s.sql, s.vars...)
	if err != nil {
		t.Fatalf("explain %s: %v", s.sql, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id, parent, notused int
		var detail string
		if err := rs.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return out
}
