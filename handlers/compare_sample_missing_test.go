package handlers

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestDashboardCompareAndReportTableSayWhyAHumanRatingIsMissing: the
// dashboard's page of a sample of two compared runs showed a bare "—" for
// a missing human rating, and so did the downloaded report's table of
// samples. The page now says why, as run A's report has it
// (humanMissingReason) and to a member of the workspace (who can
// recompute the report), after "not rated" (TestMissingHumanRatingOne
// Wording); the table says "not rated" and links to the
// sample's section, which says why (TestSharedCompareAndReportSayWhyA
// HumanRatingIsMissing checks the section's words).
func TestDashboardCompareAndReportTableSayWhyAHumanRatingIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		row := rows[0]
		crit := d.rubric.Criteria[0]
		if crit.HumanColumn == "" {
			t.Fatal("the demo rubric's first criterion has no human column")
		}
		delete(row.Ratings, crit.HumanColumn)
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: row.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: row.Ratings}).Error)
		runA := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		runB := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		comparePage := fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%d&criterion=0", runA.ID, runB.ID, row.ID)
		reportPath := "/runs/" + strconv.FormatInt(runA.ID, 10) + "/report.html"

		human := regexp.MustCompile(`Human rating <strong data-testid="human">([^<]*)</strong>\s*(?://[^\n]*\s*)*(<span class="small muted" data-testid="human-[a-z]+">([^<]*)</span>)?`)
		// The sample's row of the report's table: its first criterion's
		// human cell.
		tableCell := regexp.MustCompile(fmt.Sprintf(`(?s)<tr data-testid="sample-row"><td><a href="#sample-%d">.*?<td class="num">(.*?)</td>`, row.ID))
		short := fmt.Sprintf(`<a class="small muted" href="#sample-%d" data-testid="human-missing-short">not rated</a>`, row.ID)

		check := func(t *testing.T, why string) {
			t.Helper()
			rec := env.get(comparePage)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", comparePage, rec.Code)
			}
			m := human.FindStringSubmatch(rec.Body.String())
			if m == nil {
				t.Fatalf("the compare sample page shows no human rating:\n%s", rec.Body.String())
			}
			if why == "" {
				if m[1] == "not rated" || regexp.MustCompile(`human-missing`).MatchString(m[2]) {
					t.Errorf("the compare sample page's human rating reads %q %q, want a rating and no reason", m[1], m[3])
				}
			} else if m[1] != "not rated" || m[3] != "("+escapeText(why)+")" {
				t.Errorf("the compare sample page's human rating reads %q %q, want not rated (%s)", m[1], m[3], why)
			}

			rec = env.get(reportPath)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", reportPath, rec.Code)
			}
			c := tableCell.FindStringSubmatch(rec.Body.String())
			if c == nil {
				t.Fatalf("the report's table has no row for sample %s", row.ExternalID)
			}
			got := regexp.MustCompile(`\s+`).ReplaceAllString(c[1], " ")
			if why == "" {
				if got == "—" || regexp.MustCompile(`not rated`).MatchString(got) {
					t.Errorf("the report's table's human cell reads %q, want a rating", got)
				}
			} else if got != short {
				t.Errorf("the report's table's human cell reads %q, want %q", got, short)
			}
		}

		t.Run("finished run, stored results", func(t *testing.T) {
			check(t, "no human rating in the dataset for this sample")
		})

		// Going: the pages read the report afresh, not stored results.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", runA.ID).Update("status", models.RunRunning).Error)
		env.h.forgetReports(runA.ID)
		useBrowser := func() {
			env.postForm(fmt.Sprintf("/runs/%d/humans", runA.ID), url.Values{"source": {"browser"}})
		}
		rating := crit.Lo
		tests := []struct {
			name  string
			setup func()
			why   string // "" when there is a rating
		}{
			{"imported ratings", func() {}, "no human rating in the dataset for this sample"},
			{"browser ratings", useBrowser, "not rated yet in the browser"},
			{"rated after the report read the ratings", func() {
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ada", Score: &rating, Lo: crit.Lo, Hi: crit.Hi})
				must(t, err)
			}, "rated in the browser after the report read its ratings: recompute the report to use it"},
			{"rated and recomputed", useBrowser, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				check(t, tt.why)
			})
		}
	})
}
