package models_test

import (
	"context"
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
