package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestRobustnessLineNeedsTheSameHumans: after a run was recomputed with
// browser ratings, its noisy copy (whose report reads the imported column,
// the reviews being on the original dataset) was set against it in the
// experiment table as "noise: −0.009 vs run 1": the difference of two
// correlations with different human ratings, read as the effect of the
// noise. The line now gives no difference and says why; before the
// recompute, with both runs on the imported column, it still gives one.
// The decision is per criterion: with reviews on one criterion only, the
// runs read the same ratings on the other, and the line compares them on
// that one, saying which it left out and why (it gave no comparison).
func TestRobustnessLineNeedsTheSameHumans(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if parent.Status != models.RunSucceeded {
			t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
		}
		base := fmt.Sprintf("/runs/%d", parent.ID)
		noisy := env.waitRun(redirectedRun(t, env.postForm(base+"/noise", url.Values{"delete_percent": {"5"}, "replace_percent": {"5"}, "seed": {"1"}})), 60*time.Second)
		if noisy.ExperimentID == nil {
			t.Fatal("the noise run joined no experiment")
		}
		line := regexp.MustCompile(`data-testid="robustness">([^<]*)<`)
		robustness := func() string {
			rec := env.get(fmt.Sprintf("/experiments/%d", *noisy.ExperimentID))
			if rec.Code != http.StatusOK {
				t.Fatalf("experiment page: %d", rec.Code)
			}
			m := line.FindStringSubmatch(rec.Body.String())
			if m == nil {
				t.Fatal("the experiment page has no robustness line")
			}
			return m[1]
		}
		delta := regexp.MustCompile(fmt.Sprintf(`^noise: [+−]\d\.\d{3} vs run %d`, parent.ID))
		if got := robustness(); !delta.MatchString(got) {
			t.Errorf("both runs on the imported column: robustness line %q, want a difference with run %d", got, parent.ID)
		}

		// Reviews on the original dataset, far from the imported ratings,
		// and the parent recomputed with them: first on the first
		// criterion only, then on every criterion.
		rows, err := env.db.ListDatasetRows(ctx, parent.DatasetID, 0, 0)
		must(t, err)
		review := func(crit evaluator.Criterion) {
			for _, row := range rows[:10] {
				far := crit.Lo
				if v := row.Ratings[crit.HumanColumn]; v != nil && *v < (crit.Lo+crit.Hi)/2 {
					far = crit.Hi
				}
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: parent.DatasetID, RowID: row.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &parent.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &far})
				must(t, err)
			}
			if rec := env.postForm(base+"/humans", url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute: %d", rec.Code)
			}
		}
		crits := parent.RubricSnapshot.Criteria
		if len(crits) < 2 {
			t.Fatalf("the demo rubric has %d criteria, want 2", len(crits))
		}

		// The second criterion has no browser rating: both runs read the
		// imported column there, so the line compares them on it alone
		// (the run-level decision gave no comparison at all).
		review(crits[0])
		var exp APIExperiment
		rec := env.get(fmt.Sprintf("/api/v1/experiments/%d", *noisy.ExperimentID))
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &exp) != nil {
			t.Fatalf("experiment API: %d", rec.Code)
		}
		pearson := map[int64]float64{}
		for _, r := range exp.Runs {
			if len(r.Pearson) < 2 || r.Pearson[1] == nil {
				t.Fatalf("run %d has no Pearson r on %s", r.Run.ID, crits[1].Name)
			}
			pearson[r.Run.ID] = *r.Pearson[1]
		}
		want := fmt.Sprintf("noise: %s vs run %d (both averaged over %s, leaving out %s, measured against other human ratings (this run is measured against the imported column, run %d against the imported column and browser ratings (10 browser ratings)))",
			web.SignedCoef(pearson[noisy.ID]-pearson[parent.ID], 3), parent.ID, crits[1].Name, crits[0].Name, parent.ID)
		if got := robustness(); got != templ.EscapeString(want) {
			t.Errorf("reviews on %s only: robustness line\n %q, want\n %q", crits[0].Name, got, templ.EscapeString(want))
		}

		// Every criterion reviewed: nothing compares.
		review(crits[1])
		got := robustness()
		if delta.MatchString(got) {
			t.Errorf("robustness line %q sets correlations with other human ratings against each other", got)
		}
		want = fmt.Sprintf("noise: no comparison with run %d (this run is measured against the imported column, run %d against the imported column and browser ratings (10 browser ratings)",
			parent.ID, parent.ID)
		if !strings.HasPrefix(got, templ.EscapeString(want)) {
			t.Errorf("robustness line %q, want it to start %q", got, want)
		}
	})
}
