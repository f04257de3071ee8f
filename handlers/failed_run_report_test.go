package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// A run whose every judge call failed reads the same in its downloaded
// report and on its share link as on its page: one statement of what
// happened, not empty results (a histogram of "0 samples in 10 bins", a
// scatter of "0 points", "Entropy — bits", tables of "undefined"). What a
// reader of a report can do differs from the dashboard's: no link to the
// judge, no Test connection, no resume.
func TestFailedRunWithoutScoresReportsSayWhatHappened(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run, _ := env.runOnFakeJudge("Rejecting judge", refusingJudge(http.StatusBadRequest, "this model does not take these parameters"), env.demo().launchForm("5", "15"))
		id := run.ID
		if run.Status != models.RunFailed || run.BatchesFailed == 0 || run.BatchesDone != run.BatchesFailed {
			t.Fatalf("run %s with %d of %d batches done, %d failed: want a failed run whose every tried batch failed",
				run.Status, run.BatchesDone, run.BatchesTotal, run.BatchesFailed)
		}
		failed := "all failed"
		if run.BatchesFailed == 2 {
			failed = "both failed"
		}
		tried := fmt.Sprintf("%d of %d batches tried, %s", run.BatchesDone, run.BatchesTotal, failed)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(id, 10)}, "expires": {"7d"}})
		for _, page := range []string{fmt.Sprintf("/runs/%d/report.html", id), link, link + "/report.html"} {
			rec := env.getAs(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			body := rec.Body.String()
			for _, want := range []string{`data-testid="no-scores"`, "every call this run sent failed (" + tried + ")"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks %q", page, want)
				}
			}
			for _, not := range []string{`data-testid="criterion-card"`, "0 samples in 10 bins", "0 points", "Entropy", ">undefined<",
				`data-testid="samples"`, "Test connection", "/judges", "resume", "No scores yet"} {
				if strings.Contains(body, not) {
					t.Errorf("%s shows %q for a run without a score", page, not)
				}
			}
		}
	})
}
