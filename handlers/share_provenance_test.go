package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestSharedAndDownloadedReportsSayWhatProducedThem: a run's share link
// and its downloaded HTML report gave its correlations without the "Produced
// by" facts its page has (product version, prompt template, human-rating
// columns, and which human ratings were used): after the run was recomputed
// with browser ratings, a reader of either got other figures than the
// imported column gives, with nothing saying why or how to reproduce
// them. Both now carry the run page's "Produced by" card.
func TestSharedAndDownloadedReportsSayWhatProducedThem(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		run := env.waitRun(env.launch(env.demo().launchForm("2", "10")), 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		for _, row := range rows[:5] {
			score := crit.Lo
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &score})
			must(t, err)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		for _, tt := range []struct {
			name, path string
		}{
			{"share link", link},
			{"downloaded report", fmt.Sprintf("/runs/%d/report.html", run.ID)},
			{"share link's download", link + "/report.html"},
		} {
			rec := env.get(tt.path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", tt.name, rec.Code)
			}
			body := rec.Body.String()
			for _, want := range []string{
				`data-testid="provenance"`,
				`data-testid="product-version">BatchEval ` + templ.EscapeString(report.ProductVersion()),
				`data-testid="provenance-human-source">imported column and browser ratings (5 browser ratings`,
				templ.EscapeString(crit.HumanColumn),
			} {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks %q", tt.name, want)
				}
			}
		}
	})
}
