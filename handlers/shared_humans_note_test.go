package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestSharedExperimentHumansNoteFitsTheSharedPage: the share link of an
// experiment whose runs read different human ratings said, as the
// experiment page does, that "the headline's paired tests" measure every
// run against the best run's ratings (the shared page has no headline)
// and told its visitor to recompute the runs on each run's page (a
// visitor without an account cannot). The shared page and the downloaded
// report word it for themselves; the experiment page is unchanged.
func TestSharedExperimentHumansNoteFitsTheSharedPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a := x.batchEval
		rows, err := env.db.ListDatasetRows(ctx, a.DatasetID, 0, 0)
		must(t, err)
		crit := a.RubricSnapshot.Criteria[0]
		for _, row := range rows[:6] {
			score := crit.Hi
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: a.DatasetID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &a.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &score})
			must(t, err)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		lead := templ.EscapeString(fmt.Sprintf("These runs are measured against different human ratings on %s: “%s” against the browser ratings (6 browser ratings); “%s” against the imported column.",
			crit.Name, a.Name, x.gEval.Name))
		note := func(path string) string {
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, rec.Code)
			}
			body := rec.Body.String()
			i := strings.Index(body, `data-testid="humans-note"`)
			if i < 0 {
				t.Fatalf("%s has no note on the human ratings", path)
			}
			return body[i : i+strings.Index(body[i:], "</p>")]
		}
		link := env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {fmt.Sprint(x.exp.ID)}, "expires": {"7d"}})
		for _, tc := range []struct {
			page      string
			want, not []string
		}{
			{fmt.Sprintf("/experiments/%d", x.exp.ID),
				[]string{lead, "headline&#39;s paired tests", "on each run&#39;s page, under Human ratings"}, nil},
			{link,
				[]string{lead, "this table does not compare the judges alone", "whoever runs this experiment in BatchEval can recompute"},
				[]string{"headline", "paired tests", "on each run&#39;s page"}},
			{fmt.Sprintf("/experiments/%d/report.html", x.exp.ID),
				[]string{lead, "this table does not compare the judges alone"},
				[]string{"headline", "paired tests", "on each run&#39;s page"}},
		} {
			got := note(tc.page)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s: the note lacks %q:\n%s", tc.page, w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("%s: the note says %q, which its reader has not or cannot do:\n%s", tc.page, w, got)
				}
			}
		}
	})
}
