package models_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestWorkspaceExperimentsReadThroughAnIndex: the statements behind the
// share links page's experiments (ListExperimentNames: the newest, a
// search, the names of its links' experiments) and a project's list of
// experiments (ListExperiments) find a workspace's experiments through an
// index on both databases (regression: experiments had no index on
// workspace_id, and ListExperimentNames read every live experiment of the
// database, through experiments_trash, to find one workspace's). SQLite's
// plan must SEARCH experiments by workspace, project or id; PostgreSQL's, with sequential scans priced out (its
// planner scans a table this small anyway), must find them by an index
// condition on the workspace or the project, not filter a whole index.
func TestWorkspaceExperimentsReadThroughAnIndex(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		var mu sync.Mutex
		var stmts []explained
		const hook = "test:explain_experiments_workspace"
		take := func(tx *gorm.DB) {
			if tx.Statement.Table == "experiments" {
				mu.Lock()
				stmts = append(stmts, explained{tx.Statement.SQL.String(), slices.Clone(tx.Statement.Vars)})
				mu.Unlock()
			}
		}
		for _, c := range []interface {
			Register(string, func(*gorm.DB)) error
		}{db.Gorm.Callback().Query().After("gorm:query"), db.Gorm.Callback().Row().After("gorm:row")} {
			if err := c.Register(hook, take); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = db.Gorm.Callback().Query().Remove(hook)
			_ = db.Gorm.Callback().Row().Remove(hook)
		})
		wsID := w.ws.ID
		for _, s := range []models.NameSearch{{Limit: 51}, {Match: "exp", Limit: 51}, {IDs: []int64{1, 2, 3}}} {
			for _, opts := range [][]models.ListOption{nil, {models.WithArchived()}} {
				if _, err := db.ListExperimentNames(ctx, wsID, s, opts...); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := db.ListExperiments(ctx, wsID, w.project.ID); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(stmts) < 7 {
			t.Fatalf("%d statements seen, want the 7 made", len(stmts))
		}
		// experiments_trash (trash_id IS NULL) holds every live experiment
		// of the database: no narrower than a scan.
		bySQLiteIndex := regexp.MustCompile(`^SEARCH experiments USING (INDEX experiments_(workspace|project) |INTEGER PRIMARY KEY)`)
		byIndex := regexp.MustCompile(`Index Cond: \(.*(workspace_id|project_id) = `)
		for _, s := range stmts {
			plan := strings.Join(explainPlan(t, db, s), "; ")
			t.Logf("%s\n%s", s.sql, plan)
			if db.Dialect == models.SQLite && !bySQLiteIndex.MatchString(plan) ||
				db.Dialect == models.Postgres && !byIndex.MatchString(plan) {
				t.Errorf("%s\nreads the experiments by %q, not through an index on their workspace", s.sql, plan)
			}
		}
	})
}

// explainPlan is the plan of s: SQLite's EXPLAIN QUERY PLAN (queryPlan),
// PostgreSQL's EXPLAIN with sequential scans priced out.
func explainPlan(t *testing.T, db *models.DB, s explained) []string {
	t.Helper()
	if db.Dialect == models.SQLite {
		return queryPlan(t, db, s)
	}
	tx, err := db.SQL.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec("SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	rs, err := tx.Query("EXPLAIN "+s.sql, s.vars...)
	if err != nil {
		t.Fatalf("explain %s: %v", s.sql, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var line string
		if err := rs.Scan(&line); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out
}
