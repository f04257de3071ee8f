package models_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"gorm.io/gorm"
)

// TestWorkspaceRunsReadThroughTheirIndex: the statements behind the runs
// list, the project page and the API's list of runs (ListRunsPage,
// CountRuns) find a workspace's runs through runs_workspace on SQLite
// (regression: with no index on runs.workspace_id they read every run of
// the database, or every run of one status, to find one workspace's: 9 ms
// at 2,000 runs and growing with every workspace's runs).
func TestWorkspaceRunsReadThroughTheirIndex(t *testing.T) {
	db := dbtest.Open(t, models.SQLite)
	ctx := context.Background()
	w := newWorld(t, db)
	var mu sync.Mutex
	var stmts []explained
	const hook = "test:explain_runs_workspace"
	take := func(tx *gorm.DB) {
		if q := tx.Statement.SQL.String(); strings.Contains(q, "runs") {
			mu.Lock()
			stmts = append(stmts, explained{q, slices.Clone(tx.Statement.Vars)})
			mu.Unlock()
		}
	}
	if err := db.Gorm.Callback().Query().After("gorm:query").Register(hook, take); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Gorm.Callback().Query().Remove(hook) })
	wsID := w.runs[0].WorkspaceID
	for _, f := range []models.RunFilter{{}, {Status: models.RunSucceeded}, {Method: "batcheval"}} {
		if _, err := db.ListRunsPage(ctx, wsID, f, 0, 25); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CountRuns(ctx, wsID, f); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stmts) < 6 {
		t.Fatalf("%d statements seen, want the 6 made", len(stmts))
	}
	for _, s := range stmts {
		plan := strings.Join(queryPlan(t, db, s), "; ")
		if !strings.Contains(plan, "runs_workspace") {
			t.Errorf("%s\nreads the runs by %q, not through runs_workspace", s.sql, plan)
		}
	}
}
