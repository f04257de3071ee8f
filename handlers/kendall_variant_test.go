package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPagesNameTheKendallVariant: every page that names a Kendall
// coefficient says which one it shows (τ-b, as computed and as the README
// and the export schema say): the run page, a shared run page and the
// HTML reports said so in a note but labelled the row "Kendall τ", and the
// compare page's agreement table and the alignment page's before/after
// table said only "Kendall τ".
func TestPagesNameTheKendallVariant(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	run := alignDemoRun(t, env, "imported")
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
	a := alignAccepted(t, env, run, 7)
	d := env.ratedDataset("Rated", 40)
	ca := env.storedRun(d, "quality A", noisy(d.human, 0.4, 1), nil)
	cb := env.storedRun(d, "quality B", noisy(d.human, 0.8, 2), nil)

	// A label names Kendall where it is followed by something other than
	// the apostrophe of "Kendall's" or "and" (the notes' "Spearman and
	// Kendall"): each such mention must say τ-b.
	mention := regexp.MustCompile(`Kendall(?:&#39;s|'s)? ?(τ(?:-b)?)?`)
	for _, tc := range []struct {
		name, page string
		// rows are the parts (a testid and the tag that ends it) that
		// must name τ-b: the tables built from the coefficients' names.
		rows [][2]string
	}{
		{"run page", fmt.Sprintf("/runs/%d", run.ID), nil},
		{"run HTML report", fmt.Sprintf("/runs/%d/report.html", run.ID), nil},
		{"shared run page", link, nil},
		{"shared HTML report", link + "/report.html", nil},
		{"compare page", fmt.Sprintf("/compare?a=%d&b=%d", ca.ID, cb.ID), [][2]string{{"agreement-kendall", "tr"}, {"agreement-tests-kendall", "li"}}},
		{"alignment page", fmt.Sprintf("/alignments/%d", a.ID), [][2]string{{"comparison", "table"}, {"comparison-tests-list", "ul"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := env.getAs(tc.page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", tc.page, rec.Code)
			}
			body := rec.Body.String()
			labels := 0
			for _, m := range mention.FindAllStringSubmatch(body, -1) {
				switch m[1] {
				case "τ-b":
					labels++
				case "τ":
					t.Errorf("%s names %q without saying τ-b", tc.page, m[0])
				}
			}
			if labels == 0 {
				t.Errorf("%s never names Kendall's τ-b", tc.page)
			}
			for _, r := range tc.rows {
				id := r[0]
				block := regexp.MustCompile(`(?s)data-testid="` + id + `".*?</` + r[1] + `>`).FindString(body)
				if block == "" {
					t.Errorf("%s has no %s", tc.page, id)
					continue
				}
				if !strings.Contains(block, "Kendall τ-b") {
					t.Errorf("%s: %s does not name Kendall τ-b: %.300s", tc.page, id, block)
				}
			}
		})
	}
}
