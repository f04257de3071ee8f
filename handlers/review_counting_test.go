package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewsSayWhetherTheReportCountsThem: a sample page and the queue
// showed the report's human rating (the imported 1.00) beside reviewers'
// ratings (2, 3) and never said that the report does not count them. They
// now say it: under the imported column none counts; after a recompute
// with browser ratings, a rating given since is marked "not in the report
// yet", and one the report counts is not.
func TestReviewsSayWhetherTheReportCountsThem(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
		if err != nil || len(rows) < 1 {
			t.Fatalf("rows: %v (%d)", err, len(rows))
		}
		row := rows[0].ID
		add := func(reviewer string, v float64) {
			t.Helper()
			if _, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row,
				Criterion: "Coherent", Reviewer: reviewer, Score: &v, Lo: 1, Hi: 3}); err != nil {
				t.Fatal(err)
			}
		}
		samplePage := fmt.Sprintf("/runs/%d/samples/%d", run.ID, row)
		// The queue on this sample, the judge shown (the reviewer has not rated).
		queuePage := fmt.Sprintf("/datasets/%d/review?run=%d&criterion=1&order=random&seed=1&blind=off&i=", d.dataset.ID, run.ID)
		qi := -1
		for i := 0; i < d.dataset.RowCount && qi < 0; i++ {
			if strings.Contains(env.get(queuePage+fmt.Sprint(i)).Body.String(), fmt.Sprintf(`name="row" value="%d"`, row)) {
				qi = i
			}
		}
		if qi < 0 {
			t.Fatalf("row %d not found in the queue", row)
		}
		queuePage += fmt.Sprint(qi)
		// section is the page's Coherent reviews: the sample page's panel
		// from its Coherent heading on, the queue's page on Coherent.
		section := func(path string) string {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, rec.Code)
			}
			body := rec.Body.String()
			if i := strings.Index(body, `data-testid="sample-review"`); i >= 0 {
				// The demo's rubric has Engaging, then Coherent.
				body = body[i:]
				if j := strings.Index(body, "<h3>Coherent"); j >= 0 {
					body = body[j:]
				}
			}
			return body
		}
		add("Ann", 2)
		add("Bob", 3)
		for _, p := range []string{samplePage, queuePage} {
			s := section(p)
			if !strings.Contains(s, `data-testid="review-counting"`) || !strings.Contains(s, "imported column: it counts no browser rating, so the 2 ratings here are not in it") {
				t.Errorf("%s under the imported column: no word that the 2 ratings are not counted:\n%s", p, s)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d", rec.Code)
		}
		for _, p := range []string{samplePage, queuePage} {
			if s := section(p); strings.Contains(s, `data-testid="review-counting"`) || strings.Contains(s, `data-testid="review-not-counted"`) {
				t.Errorf("%s after the recompute: the counted ratings are said not to be counted:\n%s", p, s)
			}
		}
		add("Bob", 1) // after the recompute
		for _, p := range []string{samplePage, queuePage} {
			s := section(p)
			if strings.Count(s, `data-testid="review-not-counted"`) != 1 || !strings.Contains(s, "1 rating here came after it and is not in it yet") {
				t.Errorf("%s: Bob's new rating is not the one marked as not in the report yet:\n%s", p, s)
			}
			if i := strings.Index(s, "<strong>Ann</strong>"); i < 0 || strings.Contains(s[i:i+strings.Index(s[i:], "</li>")], "not-counted") {
				t.Errorf("%s: Ann's counted rating is marked", p)
			}
		}
	})
}
