package demo

import (
	"context"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestSeedProjectRace: processes that start together on a fresh database
// (a dashboard and its workers) seed the demo project once: one of them
// creates it, the others get that one. It used to be listed, then
// created, with nothing to stop two creations.
func TestSeedProjectRace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const starts = 6
		type result struct {
			p       models.Project
			created bool
			err     error
		}
		results := make([]result, starts)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range starts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				p, created, err := SeedProject(ctx, db, ws, nil)
				results[i] = result{p, created, err}
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("start %d: %v", i, r.err)
			}
			if r.created {
				created++
			}
			if r.p.ID != results[0].p.ID {
				t.Errorf("start %d got project %d, start 0 got %d", i, r.p.ID, results[0].p.ID)
			}
		}
		if created != 1 {
			t.Errorf("%d starts say they created the demo project, want 1", created)
		}
		ps, err := db.ListProjects(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Name != ProjectName {
			t.Errorf("%d projects after %d starts, want the one demo project: %+v", len(ps), starts, ps)
		}
		var judges int64
		if err := db.Gorm.Model(&models.Judge{}).Where("workspace_id = ? AND simulated = ?", ws.ID, true).Count(&judges).Error; err != nil {
			t.Fatal(err)
		}
		if judges != 1 {
			t.Errorf("%d simulated judges, want 1", judges)
		}
		// A later start finds it, archived or not, and seeds nothing.
		if err := db.Gorm.Model(&models.Project{}).Where("id = ?", results[0].p.ID).Update("archived_at", results[0].p.CreatedAt).Error; err != nil {
			t.Fatal(err)
		}
		if p, created, err := SeedProject(ctx, db, ws, nil); err != nil || created || p.ID != results[0].p.ID {
			t.Errorf("a start after archiving: project %d, created %v, %v; want %d, false", p.ID, created, err, results[0].p.ID)
		}
	})
}
