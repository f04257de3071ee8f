package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestCompareSaysWhenTheRunsReadOtherHumans: with run A recomputed with
// browser ratings and run B on the imported column, the compare page's
// card gave B's own Pearson (against the imported column) and its paired
// table another one for B (against A's ratings), without a word; the
// verdict's sign could flip with the order of the runs. The page now says
// the reports read different human ratings and which the paired figures
// use; with both on the imported column it says nothing of the kind.
func TestCompareSaysWhenTheRunsReadOtherHumans(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		page := func(a, b models.Run) string {
			rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", a.ID, b.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("compare %d with %d: %d", a.ID, b.ID, rec.Code)
			}
			return rec.Body.String()
		}
		if body := page(a, b); strings.Contains(body, `data-testid="humans-note"`) {
			t.Error("both runs read the imported column, yet the compare page says they read different human ratings")
		}

		rows, err := env.db.ListDatasetRows(ctx, a.DatasetID, 0, 0)
		must(t, err)
		crit := a.RubricSnapshot.Criteria[0]
		for _, row := range rows[:8] {
			far := crit.Lo
			if v := row.Ratings[crit.HumanColumn]; v != nil && *v < (crit.Lo+crit.Hi)/2 {
				far = crit.Hi
			}
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: a.DatasetID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &a.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &far})
			must(t, err)
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		// The reviews rate the first criterion only: on the second, both
		// reports hold the same ratings, and nothing is said.
		if len(a.RubricSnapshot.Criteria) > 1 {
			rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=1", a.ID, b.ID))
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-testid="humans-note"`) {
				t.Errorf("criterion 2, which no review rates: status %d, and the page says the runs read different human ratings", rec.Code)
			}
		}
		for _, tt := range []struct {
			name         string
			a, b         models.Run
			readA, readB string
		}{
			{"recomputed run as A", a, b, "the imported column and browser ratings (8 browser ratings)", "the imported column"},
			{"recomputed run as B", b, a, "the imported column", "the imported column and browser ratings (8 browser ratings)"},
		} {
			body := page(tt.a, tt.b)
			plain := fmt.Sprintf("The two runs' reports read different human ratings: A reads %s, B reads %s, which differ on 8 of the 30 samples compared. "+
				"The paired figures here measure both runs against run A's ratings", tt.readA, tt.readB)
			if !strings.Contains(body, `data-testid="humans-note"`) || !strings.Contains(body, templ.EscapeString(plain)) {
				t.Errorf("%s: the compare page does not say %q", tt.name, plain)
			}
			// The API's comparison says it too.
			rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=0", tt.a.ID, tt.b.ID))
			var out struct {
				Agreement APIAgreement `json:"agreement"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || !strings.HasPrefix(out.Agreement.HumansNote, plain) {
				t.Errorf("%s: the API's agreement.humans_note is %q (status %d), want it to start %q", tt.name, out.Agreement.HumansNote, rec.Code, plain)
			}
		}
	})
}

// TestExperimentSaysWhenTheRunsReadOtherHumans: the experiment table set
// a run recomputed with browser ratings beside runs on the imported
// column, marking the best of each column and naming a best run, with no
// word that their correlations are with different human ratings. The page
// now says so and which run reads which.
func TestExperimentSaysWhenTheRunsReadOtherHumans(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a := x.batchEval
		page := func() string {
			rec := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("experiment page: %d", rec.Code)
			}
			return rec.Body.String()
		}
		if strings.Contains(page(), `data-testid="humans-note"`) {
			t.Error("every run reads the imported column, yet the experiment page says they read different human ratings")
		}
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
		want := templ.EscapeString(fmt.Sprintf("These runs are measured against different human ratings on %s: “%s” against the browser ratings (6 browser ratings); “%s” against the imported column.",
			crit.Name, a.Name, x.gEval.Name))
		if body := page(); !strings.Contains(body, `data-testid="humans-note"`) || !strings.Contains(body, want) {
			t.Errorf("the experiment page does not say %q", want)
		}
		// So do its share link and its downloaded report.
		link := env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {fmt.Sprint(x.exp.ID)}, "expires": {"7d"}})
		for _, path := range []string{link, fmt.Sprintf("/experiments/%d/report.html", x.exp.ID)} {
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, rec.Code)
			}
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%s does not say %q", path, want)
			}
		}
	})
}
