package models_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestTrashAndLaunchTakeTurns: a run launched while its project is moved
// to the trash never ends up a live, unfinished run in a trashed project:
// either the launch commits first and the deletion is refused (the run
// has not finished), or the deletion does and the launch is refused,
// nothing written. The two are sent at the same moment, many times (on
// PostgreSQL they really overlap; SQLite's immediate transactions run one
// after the other). Regression: the launch did not look at its project in
// its transaction, and on PostgreSQL the deletion's plan did not see the
// run being launched, so the project went to the trash with a queued run
// live in it (or the run was launched into a project already in the trash).
func TestTrashAndLaunchTakeTurns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		launched, trashed := 0, 0
		for i := range 25 {
			p := models.Project{WorkspaceID: w.ws.ID, Name: fmt.Sprintf("race %d", i)}
			if err := db.CreateProject(ctx, &p); err != nil {
				t.Fatal(err)
			}
			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: p.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
				JudgeID: &w.judge.ID, Name: "raced", Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
				JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
			var launchErr, trashErr error
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Add(2)
			go func() { defer wg.Done(); <-start; launchErr = db.CreateRun(ctx, &r, nil) }()
			go func() {
				defer wg.Done()
				<-start
				_, _, trashErr = db.Trash(ctx, w.ws.ID, models.KindProject, p.ID, local)
			}()
			close(start)
			wg.Wait()
			if (launchErr == nil) == (trashErr == nil) {
				t.Fatalf("round %d: launch %v, trash %v; want exactly one to succeed", i, launchErr, trashErr)
			}
			if launchErr == nil {
				launched++
				if models.ErrorCode(trashErr) != models.EConflict {
					t.Errorf("round %d: trash refused with %v, want a conflict (the run has not finished)", i, trashErr)
				}
			} else {
				trashed++
				if models.ErrorCode(launchErr) != models.EConflict {
					t.Errorf("round %d: launch refused with %v, want a conflict (the project is in the trash)", i, launchErr)
				}
				if n := count(t, db, "runs", "project_id = ?", p.ID); n != 0 {
					t.Errorf("round %d: the refused launch left %d runs", i, n)
				}
			}
			if n := count(t, db, "runs r JOIN projects p ON p.id = r.project_id",
				"p.id = ? AND p.trash_id IS NOT NULL AND r.trash_id IS NULL", p.ID); n != 0 {
				t.Fatalf("round %d: %d live runs in the trashed project", i, n)
			}
		}
		t.Logf("%d rounds the launch came first, %d the deletion", launched, trashed)
	})
}
