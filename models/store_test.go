package models_test

import (
	"context"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// TestStartTwice is a restart: the default workspace, the simulated judge
// and the demo project are found again, not created twice (nor refused).
func TestStartTwice(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		var ids [2]int64
		var projects [2]int64
		for i := range 2 {
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				t.Fatalf("start %d: %v", i+1, err)
			}
			if ws.Slug != models.DefaultWorkspaceSlug {
				t.Errorf("workspace slug = %q, want %q", ws.Slug, models.DefaultWorkspaceSlug)
			}
			p, err := demo.Seed(ctx, db, ws)
			if err != nil {
				t.Fatalf("seed %d: %v", i+1, err)
			}
			ids[i], projects[i] = ws.ID, p.ID
		}
		if ids[0] != ids[1] || projects[0] != projects[1] {
			t.Errorf("second start made a new workspace or project: %v %v", ids, projects)
		}
		js, err := db.ListJudges(ctx, ids[0])
		if err != nil || len(js) != 1 {
			t.Errorf("judges after two starts = %d (%v), want the one simulated judge", len(js), err)
		}
	})
}

// TestEnsureDefaultWorkspaceRace: processes that start together on a
// fresh database (a dashboard and its workers) each make sure the default
// workspace exists. Every one of them must get the same workspace; the
// loser of the race for its row must not fail to start with a
// unique-key error.
func TestEnsureDefaultWorkspaceRace(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			first, err := models.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { first.Close() })
			if err := first.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			// One handle per process: each has its own connections.
			const procs = 6
			dbs := []*models.DB{first}
			for range procs - 1 {
				db, err := models.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				dbs = append(dbs, db)
			}
			// Why 15 rounds: one round loses the race only now and then.
			for round := range 15 {
				if err := first.Gorm.Exec("DELETE FROM workspaces").Error; err != nil {
					t.Fatal(err)
				}
				ids := make([]int64, procs)
				errs := make([]error, procs)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i, db := range dbs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						ws, err := db.EnsureDefaultWorkspace(ctx)
						ids[i], errs[i] = ws.ID, err
					}()
				}
				close(start)
				wg.Wait()
				for i := range procs {
					if errs[i] != nil {
						t.Fatalf("round %d: start %d: %v", round, i, errs[i])
					}
					if ids[i] == 0 || ids[i] != ids[0] {
						t.Fatalf("round %d: workspaces %v, want one and the same", round, ids)
					}
				}
			}
		})
	}
}
