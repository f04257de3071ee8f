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
// the sample page's words (humanMissingReason), and names no reviewer. A
// reason that asks for the report to be recomputed says who can: the
// link's reader cannot.
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
				text("rated in the browser after the report read its ratings: an editor of the run's workspace can recompute the report to use it")},
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
					if m[1] == "not rated" || m[2] != "" {
						t.Errorf("the human rating reads %q %q, want a rating and no reason", m[1], m[3])
					}
					return
				}
				if why := tt.why(); m[1] != "not rated" || m[3] != "("+escapeText(why)+")" {
					t.Errorf("the human rating reads %q %q, want not rated (%s)", m[1], m[3], why)
				}
			})
		}
	})
}

// TestSharedCompareAndReportSayWhyAHumanRatingIsMissing: the share page of
// a sample of two compared runs showed a bare "—" for a missing human
// rating, and the downloadable report's sections of samples "human —";
// both now say "not rated" (TestMissingHumanRatingOneWording) and why, as
// run A's report has it (humanMissingReason), name no
// reviewer, and say who can recompute the report, since their reader
// cannot. The report says it whether its figures are the finished run's
// stored ones or built afresh (a run still going), downloaded from the
// dashboard or through a share link.
func TestSharedCompareAndReportSayWhyAHumanRatingIsMissing(t *testing.T) {
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
		// The rating is gone before the runs, so the finished run's stored
		// results have none either.
		delete(row.Ratings, crit.HumanColumn)
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: row.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: row.Ratings}).Error)
		runA := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		runB := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		id := func(n int64) string { return strconv.FormatInt(n, 10) }
		runLink := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {id(runA.ID)}, "expires": {"7d"}})
		cmpLink := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {id(runA.ID)}, "other_run_id": {id(runB.ID)}, "expires": {"7d"}})
		pages := []struct{ name, path string }{
			{"shared comparison's sample page", fmt.Sprintf("%s/samples/%d?criterion=0", cmpLink, row.ID)},
			{"report downloaded through the share link", runLink + "/report.html"},
			{"report downloaded from the dashboard", "/runs/" + id(runA.ID) + "/report.html"},
		}
		// What each page says of the sample's rating on the criterion:
		// the rating, then the reason if any, every time it shows it.
		compareHuman := regexp.MustCompile(`Human rating <strong(?: data-testid="human")?>([^<]*)</strong>\s*(<span class="small muted" data-testid="human-missing">([^<]*)</span>)?`)
		section := regexp.MustCompile(fmt.Sprintf(`(?s)<section class="card sample" id="sample-%d".*?</section>`, row.ID))
		reportHuman := regexp.MustCompile(`<summary>\s*` + regexp.QuoteMeta(escapeText(crit.Name)) +
			`: judge [^,<]*, human ([^<(]*?)\s*(<span class="small muted" data-testid="human-missing">([^<]*)</span>)?\s*</summary>`)
		said := func(t *testing.T, path string) [][]string {
			t.Helper()
			rec := env.getAs(path)
			if strings.HasPrefix(path, "/runs/") {
				rec = env.get(path)
			}
			body := rec.Body.String()
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", path, rec.Code)
			}
			for _, secret := range []string{"Quietname", "ada.quietname@example.test", "misread the answer"} {
				if strings.Contains(body, secret) {
					t.Errorf("%s shows %q", path, secret)
				}
			}
			if strings.HasPrefix(path, cmpLink+"/") {
				// The sample's rating, and each run's side beside it.
				if m := compareHuman.FindAllStringSubmatch(body, -1); len(m) == 3 {
					return m
				}
				t.Fatalf("%s does not show the human rating three times:\n%s", path, body)
			}
			m := reportHuman.FindAllStringSubmatch(section.FindString(body), -1)
			if len(m) != 1 {
				t.Fatalf("%s: sample %s's section shows no human rating for %s:\n%s", path, row.ExternalID, crit.Name, section.FindString(body))
			}
			return m
		}
		check := func(t *testing.T, why string) {
			for _, p := range pages {
				for _, m := range said(t, p.path) {
					if why == "" {
						if m[1] == "not rated" || m[2] != "" {
							t.Errorf("%s: the human rating reads %q %q, want a rating and no reason", p.name, m[1], m[3])
						}
						continue
					}
					if m[1] != "not rated" || m[3] != "("+escapeText(why)+")" {
						t.Errorf("%s: the human rating reads %q %q, want not rated (%s)", p.name, m[1], m[3], why)
					}
				}
			}
		}

		t.Run("finished run, stored results", func(t *testing.T) {
			check(t, "no human rating in the dataset for this sample")
		})

		// Going, as TestSharedSamplePageSaysWhyAHumanRatingIsMissing has
		// it: the pages read the report afresh, not stored results.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", runA.ID).Update("status", models.RunRunning).Error)
		env.h.forgetReports(runA.ID)
		var last models.ReviewRating
		review := func(score *float64, comment string) {
			var err error
			last, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ada Quietname <ada.quietname@example.test>", Score: score, Comment: comment, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
		}
		useBrowser := func() {
			env.postForm(fmt.Sprintf("/runs/%d/humans", runA.ID), url.Values{"source": {"browser"}})
		}
		rating := crit.Lo
		tests := []struct {
			name  string
			setup func()
			why   func() string // "" when there is a rating
		}{
			{"imported ratings", func() {}, func() string { return "no human rating in the dataset for this sample" }},
			{"browser ratings", useBrowser, func() string { return "not rated yet in the browser" }},
			{"rated after the report read the ratings", func() { review(&rating, "") }, func() string {
				return "rated in the browser after the report read its ratings: an editor of the run's workspace can recompute the report to use it"
			}},
			{"rated and recomputed", useBrowser, func() string { return "" }},
			{"rating withdrawn and recomputed", func() { review(nil, "misread the answer"); useBrowser() }, func() string {
				return "its browser rating was withdrawn on " + last.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				check(t, tt.why())
			})
		}
	})
}
