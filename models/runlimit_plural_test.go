package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// TestRunLimitMessageCountsInWords: at a limit of one run the refusal said
// "already has 1 runs queued or running". It agrees with its count.
func TestRunLimitMessageCountsInWords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		p, err := demo.Seed(ctx, db, ws)
		if err != nil {
			t.Fatal(err)
		}
		ds, _ := db.ListDatasets(ctx, ws.ID, p.ID)
		newRun := func() *models.Run {
			return &models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds[0].ID, Name: "r", Method: "batcheval"}
		}
		db.MaxActiveRunsPerWorkspace = 1
		if err := db.CreateRun(ctx, newRun(), nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			limit int
			check func() error
			want  string
		}{
			{"one more run at a limit of one", 1, func() error { return db.CreateRun(ctx, newRun(), nil) },
				"this workspace already has 1 run queued or running, the most"},
			{"one more run, checked first", 1, func() error { return db.CheckRunCapacity(ctx, ws.ID, 1) },
				"this workspace already has 1 run queued or running, the most"},
			{"two more past a limit of two", 2, func() error { return db.CheckRunCapacity(ctx, ws.ID, 2) },
				"this workspace has 1 run queued or running and these 2 would pass its limit of 2"},
		} {
			db.MaxActiveRunsPerWorkspace = tc.limit
			err := tc.check()
			if models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), tc.want) {
				t.Errorf("%s: %v, want a conflict saying %q", tc.name, err, tc.want)
			}
		}
		// Two active runs are still "runs".
		db.MaxActiveRunsPerWorkspace = 2
		if err := db.CreateRun(ctx, newRun(), nil); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateRun(ctx, newRun(), nil); !strings.Contains(models.ErrorMessage(err), "already has 2 runs queued or running") {
			t.Errorf("a third run at a limit of two: %v", err)
		}
	})
}
