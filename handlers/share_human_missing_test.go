package handlers

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSharedSamplePageSaysWhyAHumanRatingIsMissing: a share link's sample
// page showed a bare "—" for a missing human rating; it now says why in
// the sample page's words (humanMissingReason), and names no reviewer.
func TestSharedSamplePageSaysWhyAHumanRatingIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		// A running run's pages read the report, not the stored results.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", models.RunRunning).Error)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		row := rows[0]
		crit := run.RubricSnapshot.Criteria[0]
		if crit.HumanColumn == "" {
			t.Fatal("the demo rubric's first criterion has no human column")
		}
		delete(row.Ratings, crit.HumanColumn)
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: row.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: row.Ratings}).Error)
		env.h.forgetReports(run.ID)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		samplePath := fmt.Sprintf("%s/samples/%d", link, row.ID)

		const reviewer, email = "Ada Quietname", "ada.quietname@example.test"
		var last models.ReviewRating
		review := func(score *float64, comment string) {
			var err error
			last, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: reviewer + " <" + email + ">", Score: score, Comment: comment, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
		}
		useBrowser := func() {
			env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
		}
		rating := crit.Lo
		text := func(s string) func() string { return func() string { return s } }

		tests := []struct {
			name  string
			setup func()
			why   func() string // nil when there is a rating
		}{
			{"imported ratings", func() {}, text("no human rating in the dataset for this sample")},
			{"browser ratings", useBrowser, text("not rated yet in the browser")},
			{"rated after the report read the ratings", func() { review(&rating, "") },
				text("rated in the browser after the report read its ratings: recompute the report to use it")},
			{"rated and recomputed", useBrowser, nil},
			{"rating withdrawn and recomputed", func() { review(nil, "misread the answer"); useBrowser() },
				func() string {
					return "its browser rating was withdrawn on " + last.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
				}},
		}
		human := regexp.MustCompile(`Human rating <strong data-testid="human">([^<]*)</strong>\s*(<span class="small muted" data-testid="human-missing">([^<]*)</span>)?`)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				rec := env.getAs(samplePath)
				body := rec.Body.String()
				if rec.Code != 200 {
					t.Fatalf("shared sample page: %d", rec.Code)
				}
				for _, secret := range []string{"Quietname", email, "misread the answer"} {
					if strings.Contains(body, secret) {
						t.Errorf("the shared sample page shows %q", secret)
					}
				}
				m := human.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("the shared sample page shows no human rating:\n%s", body)
				}
				if tt.why == nil {
					if m[1] == "—" || m[2] != "" {
						t.Errorf("the human rating reads %q %q, want a rating and no reason", m[1], m[3])
					}
					return
				}
				if why := tt.why(); m[1] != "—" || m[3] != "("+escapeText(why)+")" {
					t.Errorf("the human rating reads %q %q, want — (%s)", m[1], m[3], why)
				}
			})
		}
	})
}
