package models_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestRunNamesAreTheRunsListed: ListRunNames gives the runs ListRuns gives,
// archived ones included when asked, with their ids, names and archive
// dates, and its statement reads those columns only (regression: the share
// links' page read every run of the workspace whole, rubric, settings and
// judge decoded, to offer their names: 63-92 ms at 2,000 runs).
func TestRunNamesAreTheRunsListed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		w.runs = append(w.runs, w.finishedRun(t, "archived <b>run</b>"))
		now := time.Now().UTC()
		if err := db.Gorm.Model(&models.Run{}).Where("id = ?", w.runs[2].ID).Update("archived_at", now).Error; err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var sqls []string
		const hook = "test:run_names"
		if err := db.Gorm.Callback().Query().After("gorm:query").Register(hook, func(tx *gorm.DB) {
			mu.Lock()
			sqls = append(sqls, tx.Statement.SQL.String())
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Gorm.Callback().Query().Remove(hook) })
		for _, opts := range [][]models.ListOption{nil, {models.WithArchived()}} {
			mu.Lock()
			sqls = nil
			mu.Unlock()
			names, err := db.ListRunNames(ctx, w.ws.ID, models.RunNameSearch{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			read := strings.Join(sqls, "; ")
			mu.Unlock()
			if strings.Contains(read, "*") || strings.Contains(read, "rubric") || strings.Contains(read, "settings") {
				t.Errorf("ListRunNames read more than the names: %s", read)
			}
			runs, err := db.ListRuns(ctx, w.ws.ID, 0, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != len(runs) {
				t.Fatalf("%d names, %d runs listed", len(names), len(runs))
			}
			for i, r := range runs {
				n := names[i]
				if n.ID != r.ID || n.Name != r.Name || (n.ArchivedAt == nil) != (r.ArchivedAt == nil) {
					t.Errorf("name %d is %+v, want run %d %q archived %v", i, n, r.ID, r.Name, r.ArchivedAt)
				}
			}
		}
	})
}
