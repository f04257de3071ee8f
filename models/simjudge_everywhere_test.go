package models_test

import (
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// simulatedJudges counts a workspace's live simulated judges.
func simulatedJudges(t *testing.T, db *models.DB, wsID int64) int {
	t.Helper()
	js, err := db.ListJudges(t.Context(), wsID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range js {
		if j.Simulated {
			n++
		}
	}
	return n
}

// TestEveryWorkspaceHasTheSimulatedJudge: the simulated judge is built
// into every workspace, not only the one the demo is seeded in. Before,
// a dashboard started with --seed-demo=false listed no judge at all.
// The default workspace gets it when opened, a new workspace when it is
// made, and a workspace stored without one (made by an older version)
// at the next start; once each, also when processes start together.
func TestEveryWorkspaceHasTheSimulatedJudge(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		def, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := simulatedJudges(t, db, def.ID); n != 1 {
			t.Fatalf("default workspace has %d simulated judges, want 1", n)
		}

		owner, err := db.CreateFirstOwner(ctx, def.ID, models.NewUser{Email: "o@x.test", Name: "O", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		made, err := db.CreateWorkspace(ctx, "Team", owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := simulatedJudges(t, db, made.ID); n != 1 {
			t.Fatalf("a new workspace has %d simulated judges, want 1", n)
		}

		// Workspaces stored without the judge, as an older version left them.
		var old []models.Workspace
		for _, slug := range []string{"old-a", "old-b"} {
			w := models.Workspace{Slug: slug, Name: slug, CreatedAt: time.Now().UTC()}
			if err := db.Gorm.Create(&w).Error; err != nil {
				t.Fatal(err)
			}
			if n := simulatedJudges(t, db, w.ID); n != 0 {
				t.Fatalf("setup: %s already has %d simulated judges", slug, n)
			}
			old = append(old, w)
		}
		// Processes starting together each open the default workspace.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = db.EnsureDefaultWorkspace(ctx) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("start: %v", err)
			}
		}
		for _, w := range append(old, def, made) {
			if n := simulatedJudges(t, db, w.ID); n != 1 {
				t.Errorf("workspace %q has %d simulated judges after the starts, want exactly 1", w.Slug, n)
			}
		}
	})
}
