package handlers

import (
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestRunningRunReportSaysWhichScoresArePending: the HTML report of a run
// still going gave every missing score the same reason, "not judged yet,
// or no round gave a readable score", where its run page's table says of
// each which it is. The report (the run's download and a share link's)
// now says "not judged yet" of the samples whose call is pending and gives
// the answered sample whose answer could not be read that reason, as the
// run page's table and the share page do.
func TestRunningRunReportSaysWhichScoresArePending(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		// Sample 2's answer unreadable; samples 9 to 12 not judged yet.
		run := env.partialRun(d, "Still going", 1, false)
		if run.Finished() || run.BatchesDone == 0 {
			t.Fatalf("the run is %s with %d calls answered, want a running run with one", run.Status, run.BatchesDone)
		}
		pending := html.EscapeString(tableFinalMissing(run, 0))
		unreadable := html.EscapeString(tableFinalMissing(run, 1))
		vague := html.EscapeString(tableFinalMissing(run, -1))
		if pending == unreadable || pending == vague || unreadable == vague {
			t.Fatalf("the reasons are not told apart: %q, %q, %q", pending, unreadable, vague)
		}
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		for _, p := range []string{fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"} {
			rec := env.get(p)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", p, rec.Code)
			}
			body := rec.Body.String()
			for _, tc := range []struct {
				why  string
				want int
			}{{pending, 4}, {unreadable, 1}, {vague, 0}} {
				short := `title="` + tc.why + `" data-testid="final-missing-short">no score`
				if got := strings.Count(body, short); got != tc.want {
					t.Errorf("%s: %d missing scores in the samples table say %q, want %d", p, got, tc.why, tc.want)
				}
				section := `data-testid="final-missing">(judge: ` + tc.why + `)`
				if got := strings.Count(body, section); got != tc.want {
					t.Errorf("%s: %d samples' sections say %q, want %d", p, got, tc.why, tc.want)
				}
			}
		}
	})
}
