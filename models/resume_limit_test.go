package models_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// TestResumeKeepsTheRunsPerWorkspaceLimit: a finished run with gaps holds
// no place under BATCHEVAL_MAX_RUNS_PER_WORKSPACE, so Resume, which queues
// it again, is refused while the workspace is at its limit (resuming failed
// runs passed the limit) and leaves the run as it was; it is allowed once
// a place is free.
func TestResumeKeepsTheRunsPerWorkspaceLimit(t *testing.T) {
	cases := []struct{ status string }{{models.RunFailed}, {models.RunFinishedWithGaps}}
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
		for _, tc := range cases {
			queued := 0
			enqueue := func(context.Context, *sql.Tx, *models.Run) (int64, error) { queued++; return int64(100 + queued), nil }

			gappy := launch()
			// It ended with 3 of 10 batches failed: it holds no place.
			if err := db.Gorm.Exec(`UPDATE runs SET status = ?, batches_total = 10, batches_done = 10, batches_failed = 3, error = 'judge down', finished_at = ? WHERE id = ?`,
				tc.status, time.Now().UTC(), gappy.ID).Error; err != nil {
				t.Fatal(err)
			}
			other := launch()

			_, err := db.ReopenRun(ctx, ws.ID, gappy.ID, models.Requeue{}, enqueue)
			if models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), "BATCHEVAL_MAX_RUNS_PER_WORKSPACE") {
				t.Fatalf("%s: resuming past the limit: %v, want a conflict naming the setting", tc.status, err)
			}
			if !strings.Contains(models.ErrorMessage(err), "resume") {
				t.Errorf("%s: refusal %q does not say the run can be resumed later", tc.status, models.ErrorMessage(err))
			}
			run, _ := db.GetRun(ctx, gappy.ID)
			if run.Status != tc.status || run.Resumes != 0 || run.BatchesFailed != 3 || run.Error != "judge down" || queued != 0 {
				t.Errorf("%s: after the refusal the run is %s (%d resumes, %d failed batches, error %q) with %d jobs queued, want it as it was and none",
					tc.status, run.Status, run.Resumes, run.BatchesFailed, run.Error, queued)
			}

			if err := db.Gorm.Model(&models.Run{}).Where("id = ?", other.ID).Update("status", models.RunSucceeded).Error; err != nil {
				t.Fatal(err)
			}
			if run, err = db.ReopenRun(ctx, ws.ID, gappy.ID, models.Requeue{}, enqueue); err != nil || run.Status != models.RunQueued || queued != 1 {
				t.Errorf("%s: resuming with a place free: %v, run %s, %d jobs queued", tc.status, err, run.Status, queued)
			}
			// Free its place for the next case.
			if err := db.Gorm.Model(&models.Run{}).Where("id = ?", gappy.ID).Update("status", models.RunSucceeded).Error; err != nil {
				t.Fatal(err)
			}
		}
	})
}
