package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestHeldOutComparisonSaysWhenTheRunsReadOtherHumans: the held-out
// comparison pairs the two runs' samples and measures both versions
// against one set of human ratings, the before run's, as the compare page
// measures both runs against run A's: a paired test needs one target. The
// two runs choose their human ratings each on its own page, so the after
// run may read others (browser ratings made on the held-out samples and
// chosen for it alone, or chosen at another time). Audit35 suspected the
// page "reads the before run's human ratings for both runs": it does, and
// it said nothing, so its "after" column silently differed from the after
// run's own figures. Now, with the after run on the browser ratings and
// the before run on the imported column, the comparison is unchanged (the
// before run's ratings, stated) and the page says which ratings each run
// reads and on how many samples they differ, both ways (stored results
// and full reports); once both runs read the same ratings the note goes
// and the comparison is measured against those.
func TestHeldOutComparisonSaysWhenTheRunsReadOtherHumans(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 120
		run, a := heldOutSetup(t, env, n, 7)
		render := func(full bool) (string, string) {
			t.Helper()
			env.h.reports = newReportCache()
			v, page, err := alignmentPage(env, a, run, full)
			mustB(t, err)
			if len(v.Comparisons) == 0 {
				t.Fatalf("no comparison: %s", v.CompareNote)
			}
			return fmt.Sprintf("%+v", v.Comparisons), page
		}
		choose := func(runID int64, source string) {
			t.Helper()
			if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", runID), url.Values{"source": {source}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("choose %s for run %d: %d %s", source, runID, rec.Code, rec.Body.String())
			}
		}
		const note = `data-testid="humans-note"`

		imported, page := render(false)
		if strings.Contains(page, note) {
			t.Fatalf("both runs read the imported column, yet the page notes different ratings")
		}

		choose(*a.AfterRunID, "browser")
		for _, full := range []bool{false, true} {
			figures, page := render(full)
			if figures != imported {
				t.Errorf("full %v: the comparison moved when only the after run's ratings changed: %s, was %s", full, figures, imported)
			}
			i := strings.Index(page, note)
			if i < 0 {
				t.Fatalf("full %v: the after run reads the browser ratings and the before run the imported column; the page does not say so", full)
			}
			if strings.Contains(page, `data-testid="before-humans-note"`) {
				t.Errorf("full %v: the before run reads the held-out samples' column, yet the page says it reads other ratings", full)
			}
			said := page[i:min(len(page), i+900)]
			for _, want := range []string{
				fmt.Sprintf("run %d) reads the imported column", *a.BeforeRunID),
				fmt.Sprintf("run %d) reads the browser ratings", *a.AfterRunID),
				fmt.Sprintf("of the %d held-out samples compared", n),
				"against the before run&#39;s ratings",
			} {
				if !strings.Contains(said, want) {
					t.Errorf("full %v: the note lacks %q:\n%s", full, want, said)
				}
			}
		}

		choose(*a.BeforeRunID, "browser")
		browser, page := render(false)
		if strings.Contains(page, note) {
			t.Errorf("both runs read the same browser ratings, yet the page notes different ratings")
		}
		// Both read other ratings than the column the held-out samples
		// carry (the source run's): the page says the comparison is not
		// measured against those.
		if i := strings.Index(page, `data-testid="before-humans-note"`); i < 0 ||
			!strings.Contains(page[i:], fmt.Sprintf("The before run (run %d) reads the browser ratings", *a.BeforeRunID)) {
			t.Errorf("the before run reads browser ratings, not the held-out samples' column; the page does not say so")
		}
		if browser == imported {
			t.Errorf("both runs read the browser ratings, yet the comparison is the imported column's")
		}
	})
}
