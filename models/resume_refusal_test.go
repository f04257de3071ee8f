package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReopenRunRefusalSaysWhy: a resume that is refused says why in the
// run's own terms. A cancelled run with most of its batches unanswered was
// refused as "run 5 has cancelled with no gaps: there is nothing to
// resume", which is false on both counts the operator reads.
func TestReopenRunRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    string
		done      int // of 100 batches
		want, not string
	}{
		{name: "cancelled midway", status: models.RunCancelled, done: 32, want: "was cancelled", not: "no gaps"},
		{name: "succeeded whole", status: models.RunSucceeded, done: 100, want: "no gaps"},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		for _, tc := range cases {
			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, RubricID: &w.rubric.ID,
				JudgeID: &w.judge.ID, Name: tc.name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
				JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			if err := db.Gorm.Exec(`UPDATE runs SET status = ?, batches_total = 100, batches_done = ?, finished_at = ? WHERE id = ?`,
				tc.status, tc.done, time.Now().UTC(), r.ID).Error; err != nil {
				t.Fatal(err)
			}
			_, err := db.ReopenRun(ctx, w.ws.ID, r.ID, models.Requeue{}, nil)
			if models.ErrorCode(err) != models.EConflict {
				t.Fatalf("%s: resume answered %v, want a conflict", tc.name, err)
			}
			msg := models.ErrorMessage(err)
			if !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
				t.Errorf("%s: refused with %q; want it to say %q (and not %q)", tc.name, msg, tc.want, tc.not)
			}
		}
	})
}
