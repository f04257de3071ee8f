package handlers

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// headingSkips lists the headings of a page that come more than one level
// below the heading before them (h1 then h3), which screen-reader users
// navigating by heading read as a missing section (axe heading-order).
func headingSkips(body string) []string {
	var out []string
	prev := 0
	for _, m := range regexp.MustCompile(`<h([1-6])\b`).FindAllStringSubmatchIndex(body, -1) {
		level, _ := strconv.Atoi(body[m[2]:m[3]])
		if prev > 0 && level > prev+1 {
			out = append(out, fmt.Sprintf("h%d after h%d at %.80q", level, prev, body[m[0]:]))
		}
		prev = level
	}
	return out
}

// TestSamplePagesHeadingOrder: the pages of one sample (a shared run's, a
// comparison's on the dashboard and shared) and a G-Eval run's page with
// its evaluation steps go h1, h2, h3 without skipping a level.
func TestSamplePagesHeadingOrder(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		b := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		ge := env.waitRun(env.startRun(d.dataset, "G-Eval", models.MethodGEval, nil).ID, 60*time.Second)
		rows, err := env.db.ListDatasetRows(t.Context(), d.dataset.ID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatalf("rows: %v", err)
		}
		row := strconv.FormatInt(rows[0].ID, 10)
		runLink := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(a.ID, 10)}, "expires": {"1d"}})
		cmpLink := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(a.ID, 10)},
			"other_run_id": {strconv.FormatInt(b.ID, 10)}, "expires": {"1d"}})
		for _, tc := range []struct{ name, path, must string }{
			{"shared run's sample", runLink + "/samples/" + row, `data-testid="back-to-report"`},
			{"shared comparison's sample", cmpLink + "/samples/" + row, `data-testid="back-to-report"`},
			{"comparison's sample", fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%s&criterion=0", a.ID, b.ID, row), `data-testid="human"`},
			{"G-Eval run with its steps", fmt.Sprintf("/runs/%d", ge.ID), `data-testid="evaluation-steps"`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.getAs(tc.path)
				body := rec.Body.String()
				if rec.Code != 200 || !regexp.MustCompile(regexp.QuoteMeta(tc.must)).MatchString(body) {
					t.Fatalf("%s: status %d, or no %s", tc.path, rec.Code, tc.must)
				}
				for _, s := range headingSkips(body) {
					t.Errorf("%s: %s", tc.path, s)
				}
			})
		}
	})
}
