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

// TestReviewQueueSaysWhyAScoreIsMissing: a missing judge score in the
// review queue used to be a bare "—"; it now says why, as the sample
// page does: the round's reason from its batch, and for the final score
// whether the judge's answer could not be read, the call failed, or the
// sample is not judged yet.
func TestReviewQueueSaysWhyAScoreIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		// The queue of a run still running reads its scores as they are
		// now, not the results stored when it finished.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", models.RunRunning).Error)
		queueURL := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=random&run=%d&seed=1&blind=off", d.dataset.ID, run.ID)
		m := regexp.MustCompile(fmt.Sprintf(`/runs/%d/samples/(\d+)`, run.ID)).FindStringSubmatch(env.get(queueURL).Body.String())
		if m == nil {
			t.Fatal("the queue links no sample page")
		}
		rowID, _ := strconv.ParseInt(m[1], 10, 64)
		scores, err := env.db.ListRowScores(ctx, run.ID, rowID)
		if err != nil || len(scores) == 0 {
			t.Fatalf("scores of row %d: %v (%d)", rowID, err, len(scores))
		}
		s := scores[0] // criterion 0, round 1: the only round
		must(t, env.db.Gorm.Model(&models.RunScore{}).Where("id = ?", s.ID).Update("score", nil).Error)
		label := fmt.Sprintf("Sample%d", s.Label)

		tests := []struct {
			name  string
			setup func()
			round string // the round's reason, "" when the round is not shown
			final string
		}{
			{"unreadable answer", func() {
				must(t, env.db.Gorm.Model(&models.RunBatch{ID: s.BatchID}).Select("problems").
					Updates(models.RunBatch{Problems: []string{label + ": no score found"}}).Error)
			}, "(not readable: no score found)", "(the judge's answer could not be read)"},
			{"failed call", func() {
				must(t, env.db.Gorm.Model(&models.RunBatch{ID: s.BatchID}).Select("problems", "error", "status").
					Updates(models.RunBatch{Problems: []string{}, Error: "HTTP 503: overloaded", Status: models.BatchFailed}).Error)
			}, "(not readable: the judge's call failed: HTTP 503: overloaded)", "(the judge call failed)"},
			{"not judged yet", func() {
				must(t, env.db.Gorm.Where("run_id = ? AND row_id = ? AND criterion_index = 0", run.ID, rowID).Delete(&models.RunScore{}).Error)
			}, "", "(not judged yet)"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				// The scores changed behind the runner's back, with none
				// of the progress an answer makes: the running run's
				// shared figures are computed again.
				env.h.forgetReports(run.ID)
				body := env.get(queueURL).Body.String()
				if !strings.Contains(body, fmt.Sprintf("/runs/%d/samples/%d", run.ID, rowID)) {
					t.Fatalf("the queue moved off row %d", rowID)
				}
				if !strings.Contains(body, `data-testid="review-judge-score">—</strong>`) {
					t.Fatalf("the final score is not missing:\n%s", body)
				}
				if want := `data-testid="review-score-missing">` + escapeText(tt.final) + `</span>`; !strings.Contains(body, want) {
					t.Errorf("the queue lacks %q beside the missing final score", want)
				}
				if tt.round != "" {
					if want := `data-testid="unreadable">` + escapeText(tt.round) + `</span>`; !strings.Contains(body, want) {
						t.Errorf("the queue lacks %q beside the missing round score", want)
					}
				}
			})
		}
	})
}

// escapeText is s as templ writes text (quotes and apostrophes escaped).
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", `"`, "&#34;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestReviewQueueSaysWhyAHumanRatingIsMissing: a sample without a human
// rating in the run's report showed a bare "—" in the review queue; it
// now says why in a title and to screen readers, as the judge-score cells
// do: the dataset has none for the sample, nobody rated it in the browser
// yet, or its browser rating came after the report read its ratings.
func TestReviewQueueSaysWhyAHumanRatingIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		// A running run's queue reads the report, not the stored results.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", models.RunRunning).Error)
		queueURL := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=random&run=%d&seed=1&blind=off", d.dataset.ID, run.ID)
		m := regexp.MustCompile(fmt.Sprintf(`/runs/%d/samples/(\d+)`, run.ID)).FindStringSubmatch(env.get(queueURL).Body.String())
		if m == nil {
			t.Fatal("the queue links no sample page")
		}
		rowID, _ := strconv.ParseInt(m[1], 10, 64)
		crit := run.RubricSnapshot.Criteria[0]
		if crit.HumanColumn == "" {
			t.Fatal("the demo rubric's first criterion has no human column")
		}
		rows, err := env.db.FindDatasetRows(ctx, d.dataset.ID, []int64{rowID})
		if err != nil {
			t.Fatal(err)
		}
		row := rows[rowID]
		delete(row.Ratings, crit.HumanColumn)
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: rowID}).Select("ratings").Updates(models.DatasetRow{Ratings: row.Ratings}).Error)
		env.h.forgetReports(run.ID)

		tests := []struct {
			name  string
			setup func()
			why   string
		}{
			{"imported ratings", func() {}, "no human rating in the dataset for this sample"},
			{"browser ratings", func() {
				env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
			}, "not rated yet in the browser"},
			{"both", func() {
				env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}})
			}, "no human rating in the dataset for this sample, and not rated yet in the browser"},
			{"rated after the report read the ratings", func() {
				env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
				score := crit.Lo
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rowID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ada", Score: &score, Lo: crit.Lo, Hi: crit.Hi})
				must(t, err)
			}, "rated in the browser after the report read its ratings: recompute the report to use it"},
		}
		// The reviewer withdraws that rating and the report reads the
		// ratings again: it read "not rated yet in the browser".
		var withdrawal models.ReviewRating
		tests = append(tests, struct {
			name  string
			setup func()
			why   string
		}{"rating withdrawn", func() {
			var err error
			withdrawal, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rowID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ada", Comment: "misread it", Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
			env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
		}, ""})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				if tt.why == "" {
					tt.why = "its browser rating was withdrawn on " + withdrawal.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
				}
				body := env.get(queueURL).Body.String()
				if !strings.Contains(body, fmt.Sprintf("/runs/%d/samples/%d", run.ID, rowID)) {
					t.Fatalf("the queue moved off row %d", rowID)
				}
				want := `data-testid="review-human" title="` + escapeText(tt.why) + `">not rated<span class="sr-only"> (` + escapeText(tt.why) + `)</span></strong>`
				if !strings.Contains(body, want) {
					got := regexp.MustCompile(`data-testid="review-human"[^>]*>.*?</strong>`).FindString(body)
					t.Errorf("the missing human rating reads %s, want %s", got, want)
				}
			})
		}
	})
}

// TestSamplePageSaysWhyAHumanRatingIsMissing: the sample page showed
// "Human rating —" without a reason, also after the only browser rating
// was withdrawn and the report recomputed; it now says why in the review
// queue's words (humanMissingReason), and nothing when there is a rating.
func TestSamplePageSaysWhyAHumanRatingIsMissing(t *testing.T) {
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
		var last models.ReviewRating // the latest review
		review := func(score *float64, comment string) {
			var err error
			last, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ada", Score: score, Comment: comment, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
		}
		withdrawnAt := func() string { return last.CreatedAt.UTC().Format("2006-01-02 15:04 UTC") }
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
			{"a comment without a rating withdraws nothing", func() { review(nil, "hard to say"); useBrowser() }, text("not rated yet in the browser")},
			{"rated after the report read the ratings", func() { review(&rating, "") },
				text("rated in the browser after the report read its ratings: recompute the report to use it")},
			{"rated and recomputed", useBrowser, nil},
			// It read "not rated yet in the browser", as if nobody had.
			{"rating withdrawn and recomputed", func() { review(nil, "misread the answer"); useBrowser() },
				func() string { return "its browser rating was withdrawn on " + withdrawnAt() }},
		}
		human := regexp.MustCompile(`Human rating <strong data-testid="human">([^<]*)</strong>\s*(<span class="small muted" data-testid="human-missing">([^<]*)</span>)?`)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.setup()
				body := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, row.ID)).Body.String()
				m := human.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("the sample page shows no human rating:\n%s", body)
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
