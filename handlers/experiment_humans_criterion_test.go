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

// TestExperimentHumansNotePerCriterion: the experiment page's note that
// its runs are measured against different human ratings was decided per
// run (its human source, the newest browser rating it read and its count
// over all criteria), not per criterion. Two runs that read the very same
// browser ratings on Engaging, one of them also a rating on Coherent
// where the other has none, were said to be measured against different
// ratings; and a run reading the imported column and browser ratings,
// with browser ratings on Engaging only, was said to be measured against
// them on Coherent too, where it reads the imported column like the
// other run. The note now names the criteria whose ratings differ, with
// each run's ratings on that criterion; the API's experiment, which said
// nothing of it, gives it as humans_note.
func TestExperimentHumansNotePerCriterion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		crits := a.RubricSnapshot.Criteria
		if len(crits) < 2 {
			t.Fatalf("the demo rubric has %d criteria, want 2", len(crits))
		}
		rows, err := env.db.ListDatasetRows(ctx, a.DatasetID, 0, 0)
		must(t, err)
		rate := func(ci int, n int, reviewer string) {
			c := crits[ci]
			for _, row := range rows[:n] {
				score := c.Hi
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: a.DatasetID, RowID: row.ID,
					Criterion: c.Name, HumanColumn: c.HumanColumn, Reviewer: reviewer, Lo: c.Lo, Hi: c.Hi, Score: &score})
				must(t, err)
			}
		}
		recompute := func(r models.Run, source string) {
			if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", r.ID), url.Values{"source": {source}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute run %d with %s: %d", r.ID, source, rec.Code)
			}
		}
		note := func() string {
			rec := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("experiment page: %d", rec.Code)
			}
			body := rec.Body.String()
			i := strings.Index(body, `data-testid="humans-note"`)
			if i < 0 {
				return ""
			}
			return body[i : i+strings.Index(body[i:], "</p>")]
		}

		// A reads imported and browser ratings: browser ratings on
		// Engaging (6), none on Coherent, where it reads the imported
		// column like B.
		rate(0, 6, "Ann")
		recompute(a, "both")
		apiNote := func() string {
			var out APIExperiment
			rec := env.get(fmt.Sprintf("/api/v1/experiments/%d", x.exp.ID))
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
				t.Fatalf("experiment API: %d", rec.Code)
			}
			return out.HumansNote
		}
		got := note()
		plain := fmt.Sprintf("These runs are measured against different human ratings on %s: “%s” against the imported column and browser ratings (6 browser ratings); “%s” against the imported column.",
			crits[0].Name, a.Name, b.Name)
		want := templ.EscapeString(plain)
		if api := apiNote(); !strings.HasPrefix(api, plain) {
			t.Errorf("the API's experiment humans_note is %q, want it to start %q", api, plain)
		}
		if !strings.Contains(got, want) {
			t.Errorf("the note does not say which criterion differs and how:\n got %s\nwant %s", got, want)
		}
		if strings.Contains(got, crits[1].Name) {
			t.Errorf("the note names %s, where both runs read the imported column:\n%s", crits[1].Name, got)
		}

		// Both runs read the same 6 browser ratings on Engaging; B also
		// reads 3 on Coherent, where A reads none (no correlation to set
		// against B's).
		recompute(a, "browser")
		rate(1, 3, "Bob")
		recompute(b, "browser")
		if got := note(); got != "" {
			t.Errorf("runs reading the same ratings on every criterion both have ratings on are said to differ:\n%s", got)
		}
		if api := apiNote(); api != "" {
			t.Errorf("the API's experiment says %q of runs reading the same ratings", api)
		}
	})
}

// TestCompareHumansNoteCountsTheCriterionsRatings: the compare page, on
// one criterion, named the browser ratings a run's report read by their
// count over all its criteria: 9, where 6 rate the criterion compared.
func TestCompareHumansNoteCountsTheCriterionsRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		crits := a.RubricSnapshot.Criteria
		rows, err := env.db.ListDatasetRows(ctx, a.DatasetID, 0, 0)
		must(t, err)
		for ci, n := range []int{6, 3} {
			c := crits[ci]
			for _, row := range rows[:n] {
				score := c.Hi
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: a.DatasetID, RowID: row.ID,
					Criterion: c.Name, HumanColumn: c.HumanColumn, Reviewer: "Ann", Lo: c.Lo, Hi: c.Hi, Score: &score})
				must(t, err)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		for ci, want := range []string{"A reads the browser ratings (6 browser ratings), B reads the imported column",
			"A reads the browser ratings (3 browser ratings), B reads the imported column"} {
			rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, ci))
			if rec.Code != http.StatusOK {
				t.Fatalf("compare on criterion %d: %d", ci, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, templ.EscapeString(want)) {
				i := strings.Index(body, `data-testid="humans-note"`)
				t.Errorf("compare on %s: the note does not say %q:\n%s", crits[ci].Name, want, body[max(i, 0):max(i, 0)+400])
			}
		}
	})
}
