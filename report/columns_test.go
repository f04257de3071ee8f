package report

import (
	"context"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReportLeavesPromptsAndAnswersInTheDatabase records every query a
// report makes: those on batches and scores name their columns, and none
// reads the prompts, answers or analyses (most of a run's bytes).
func TestReportLeavesPromptsAndAnswersInTheDatabase(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		wsID, runID := synthRun(t, db, 40)
		var mu sync.Mutex
		var queries []string
		record := func(tx *gorm.DB) {
			mu.Lock()
			queries = append(queries, tx.Statement.SQL.String())
			mu.Unlock()
		}
		// Reports read through the read pool (a separate one on SQLite).
		for _, g := range []*gorm.DB{db.Gorm, db.Read} {
			if err := g.Callback().Query().After("gorm:query").Replace("test:record", record); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Build(context.Background(), db, wsID, runID); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, q := range queries {
			lower := strings.ToLower(q)
			for _, table := range []string{"run_batches", "run_scores"} {
				if !strings.Contains(lower, "from \""+table+"\"") && !strings.Contains(lower, "from `"+table+"`") && !strings.Contains(lower, "from "+table) {
					continue
				}
				seen[table] = true
				if strings.Contains(lower, "select *") {
					t.Errorf("report reads every column of %s: %s", table, q)
				}
				for _, col := range []string{"request", "response", "analysis"} {
					if strings.Contains(lower, col) {
						t.Errorf("report reads %s from %s: %s", col, table, q)
					}
				}
			}
		}
		if !seen["run_batches"] || !seen["run_scores"] {
			t.Fatalf("recorded no query on batches or scores (%v): the recording does not work", queries)
		}
	})
}
