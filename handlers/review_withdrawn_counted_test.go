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

// TestWithdrawnRatingStillCountedIsSaid: a reviewer withdrew a rating the
// run's report had been recomputed with. The sample page listed them with
// no rating while its human rating (2.67) still averaged theirs in, with no
// word of it. The withdrawal now says the report still counts it until its
// next recompute; a withdrawal of a rating the report never read does not.
func TestWithdrawnRatingStillCountedIsSaid(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
		must(t, err)
		row := rows[0].ID
		add := func(reviewer string, v *float64, comment string) {
			t.Helper()
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row,
				Criterion: "Coherent", Reviewer: reviewer, Score: v, Lo: 1, Hi: 3, Comment: comment})
			must(t, err)
		}
		two, three := 2.0, 3.0
		add("Ann", &two, "")
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		add("Ann", nil, "wrong sample") // withdraws the rating the report read
		add("Bob", &three, "")
		add("Bob", nil, "misclick") // withdraws a rating the report never read
		body := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, row)).Body.String()
		i := strings.Index(body, "<h3>Coherent")
		if i < 0 {
			t.Fatal("no Coherent reviews on the sample page")
		}
		body = body[i:]
		if n := strings.Count(body, `data-testid="review-still-counted"`); n != 1 {
			t.Errorf("%d withdrawals said to be still counted, want 1 (Ann's)", n)
		}
		if j := strings.Index(body, "<strong>Ann</strong>"); j < 0 || !strings.Contains(body[j:j+strings.Index(body[j:], "</li>")], "review-still-counted") {
			t.Errorf("Ann's withdrawal is not the one said to be still counted")
		}
		if !strings.Contains(body, "1 rating withdrawn since is still in it") {
			t.Errorf("no note that the withdrawn rating is still in the report:\n%s", body)
		}
	})
}
