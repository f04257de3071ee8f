package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestTrashIfTakesOnlyWhatWasListed: a deletion confirmed on a page that
// listed what goes (TrashPlan.Listing) moves nothing when more would go
// now (a run made since) or a listed run would now need cancelling (it
// restarted), and says which; less than listed (a run deleted since), or
// no listing at all, deletes as before. (Before, the deletion took, and
// the handler cancelled, whatever existed when the post came.)
func TestTrashIfTakesOnlyWhatWasListed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// since changes the world after the page was shown.
		since func(t *testing.T, db *models.DB, w *world)
		// noListing posts no listing; want is the refusal's phrase
		// ("" for a deletion).
		noListing bool
		want      string
	}{
		{"a run made since", func(t *testing.T, db *models.DB, w *world) { w.finishedRun(t, "run made since") }, false, "run “run made since” (succeeded)"},
		{"a queued run made since", func(t *testing.T, db *models.DB, w *world) {
			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, JudgeID: &w.judge.ID,
				Name: "queued since", Method: models.MethodBatchEval, CreatedAt: time.Now()}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
		}, false, "run “queued since” (queued)"},
		{"a listed run restarted", func(t *testing.T, db *models.DB, w *world) {
			if err := db.Gorm.Exec("UPDATE runs SET status = ? WHERE id = ?", models.RunQueued, w.runs[1].ID).Error; err != nil {
				t.Fatal(err)
			}
		}, false, "run “run B” (queued) would now be cancelled first"},
		{"a listed run deleted since", func(t *testing.T, db *models.DB, w *world) {
			if _, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[1].ID, local); err != nil {
				t.Fatal(err)
			}
		}, false, ""},
		{"nothing changed", func(t *testing.T, db *models.DB, w *world) {}, false, ""},
		{"no listing posted", func(t *testing.T, db *models.DB, w *world) { w.finishedRun(t, "run made since") }, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				w := newWorld(t, db)
				shown, err := db.PlanTrash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID)
				if err != nil {
					t.Fatal(err)
				}
				listing := shown.Listing()
				if tc.noListing {
					listing = ""
				}
				tc.since(t, db, w)
				_, _, err = db.TrashIf(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local, listing)
				trashed := count(t, db, "datasets", "id = ? AND trash_id IS NOT NULL", w.dataset.ID) == 1
				if tc.want == "" {
					if err != nil || !trashed {
						t.Errorf("deletion: %v, trashed %v; want it done", err, trashed)
					}
					return
				}
				if models.ErrorCode(err) != models.EChanged || !strings.Contains(models.ErrorMessage(err), tc.want) {
					t.Errorf("deletion: %v, want a refusal naming %s", err, tc.want)
				}
				if trashed || count(t, db, "runs", "dataset_id = ? AND trash_id IS NOT NULL", w.dataset.ID) != 0 {
					t.Errorf("a refused deletion moved the dataset (%v) or its runs to the trash", trashed)
				}
			})
		})
	}
}
