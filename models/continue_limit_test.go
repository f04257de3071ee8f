package models_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// TestContinueKeepsTheRunsPerWorkspaceLimit: a paused run holds no place
// under BATCHEVAL_MAX_RUNS_PER_WORKSPACE, so Continue, which queues it
// again, is refused while the workspace is at its limit (pausing runs,
// launching others and continuing the paused ones passed the limit), and
// allowed once a place is free.
func TestContinueKeepsTheRunsPerWorkspaceLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, _ := db.EnsureDefaultWorkspace(ctx)
		p, err := demo.Seed(ctx, db, ws)
		if err != nil {
			t.Fatal(err)
		}
		ds, _ := db.ListDatasets(ctx, ws.ID, p.ID)
		db.MaxActiveRunsPerWorkspace = 1
		launch := func() *models.Run {
			t.Helper()
			r := &models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds[0].ID, Name: "r", Method: "batcheval"}
			if err := db.CreateRun(ctx, r, nil); err != nil {
				t.Fatal(err)
			}
			return r
		}
		queued := 0
		enqueue := func(context.Context, *sql.Tx, *models.Run) (int64, error) { queued++; return int64(100 + queued), nil }

		paused := launch()
		if _, err := db.RequestPause(ctx, ws.ID, paused.ID); err != nil {
			t.Fatal(err)
		}
		other := launch() // the paused run freed its place

		run, err := db.ContinueRun(ctx, ws.ID, paused.ID, models.Requeue{}, enqueue)
		if models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") {
			t.Fatalf("continuing past the limit: %v, want a conflict naming the setting", err)
		}
		if !strings.Contains(models.ErrorMessage(err), "continue") {
			t.Errorf("refusal %q does not say the run can be continued later", models.ErrorMessage(err))
		}
		if run, _ = db.GetRun(ctx, paused.ID); run.Status != models.RunPaused || queued != 0 {
			t.Errorf("after the refusal the run is %s with %d jobs queued, want paused and none", run.Status, queued)
		}

		if err := db.Gorm.Model(&models.Run{}).Where("id = ?", other.ID).Update("status", models.RunSucceeded).Error; err != nil {
			t.Fatal(err)
		}
		if run, err = db.ContinueRun(ctx, ws.ID, paused.ID, models.Requeue{}, enqueue); err != nil || run.Status != models.RunQueued || queued != 1 {
			t.Errorf("continuing with a place free: %v, run %s, %d jobs queued", err, run.Status, queued)
		}
	})
}
