package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSharedSampleSaysWhereItsHumanRatingComesFrom: a run recomputed with
// its reviewers' ratings shows, on a sample page, "Human rating 1.50 (mean
// of the imported column and browser ratings, as the report uses them)";
// the same sample opened through a share link showed 1.50 alone, where
// the dataset holds another value, with no word of the reviewers. It says
// it too; a run on its imported column says nothing more.
func TestSharedSampleSaysWhereItsHumanRatingComesFrom(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
		must(t, err)
		row := rows[0].ID
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
		shared := link + fmt.Sprintf("/samples/%d", row)
		sourceNotes := func() int {
			t.Helper()
			rec := env.get(shared)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", shared, rec.Code)
			}
			return strings.Count(rec.Body.String(), "(mean of the imported column and browser ratings, as the report uses them)")
		}
		if n := sourceNotes(); n != 0 {
			t.Errorf("on the imported column: %d notes on the ratings' source, want none", n)
		}
		crit := run.RubricSnapshot.Criteria[0]
		score := crit.Hi
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row,
			Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &score})
		must(t, err)
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		// The rated criterion says so; so does the other (its imported
		// column, as the report's "both" reads it), as on the sample page.
		inApp := strings.Count(env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, row)).Body.String(),
			"(mean of the imported column and browser ratings, as the report uses them)")
		if inApp == 0 {
			t.Fatalf("the sample page itself does not say where its human rating comes from")
		}
		if n := sourceNotes(); n != inApp {
			t.Errorf("shared sample: %d notes on the ratings' source, want %d as on the sample page", n, inApp)
		}
	})
}
