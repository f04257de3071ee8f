package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestSamplePageHumanFollowsReport: once a run's report is recomputed with
// browser ratings, a sample page's human rating (and its batch mates') is
// the one the report uses, the mean of the imported rating and the
// reviewers', not the imported column alone; the run's table and the
// review queue show the same number.
func TestSamplePageHumanFollowsReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		// The sample and one of its first batch's mates, both rated by two
		// reviewers at the far end of the scale from their imported rating.
		scores, err := env.db.ListRowScores(ctx, run.ID, rows[0].ID)
		must(t, err)
		b, err := env.db.FindBatch(ctx, run.ID, scores[0].BatchID)
		must(t, err)
		var mate models.DatasetRow
		for _, r := range rows {
			if r.ID != rows[0].ID && slices.Contains(b.RowIDs, r.ID) && mate.ID == 0 {
				mate = r
			}
		}
		if mate.ID == 0 {
			t.Fatalf("batch %d has no other sample: %v", b.ID, b.RowIDs)
		}
		far := func(r models.DatasetRow) float64 {
			if *r.Ratings[crit.HumanColumn] < (crit.Lo+crit.Hi)/2 {
				return crit.Hi
			}
			return crit.Lo
		}
		for _, r := range []models.DatasetRow{rows[0], mate} {
			for _, who := range []string{"Ann", "Bo"} {
				v := far(r)
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: r.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &v})
				must(t, err)
			}
		}
		page := fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[0].ID)
		human := regexp.MustCompile(`data-testid="human">([^<]*)<`)
		mateHuman := regexp.MustCompile(`data-testid="mate">` + regexp.QuoteMeta(mate.ExternalID) + `</a></td><td class="num" data-testid="mate-score">[^<]*</td><td class="num" data-testid="mate-human">([^<]*)<`)
		tests := []struct {
			source     string
			want, mate float64 // on criterion 0
			note       string
		}{
			{"imported", *rows[0].Ratings[crit.HumanColumn], *mate.Ratings[crit.HumanColumn], ""},
			{"both", (*rows[0].Ratings[crit.HumanColumn] + 2*far(rows[0])) / 3, (*mate.Ratings[crit.HumanColumn] + 2*far(mate)) / 3,
				"(mean of the imported column and browser ratings, as the report uses them)"},
			{"browser", far(rows[0]), far(mate), "(mean of the browser ratings, as the report uses them)"},
		}
		for _, tt := range tests {
			t.Run(tt.source, func(t *testing.T) {
				if tt.source != "imported" {
					rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {tt.source}})
					if rec.Code != http.StatusSeeOther {
						t.Fatalf("recompute: %d", rec.Code)
					}
				}
				body := env.get(page).Body.String()
				got := human.FindStringSubmatch(body)
				if got == nil || got[1] != fmtScore(tt.want) {
					t.Errorf("sample page's human rating %q, want %s", got, fmtScore(tt.want))
				}
				if m := mateHuman.FindStringSubmatch(body); m == nil || m[1] != fmtScore(tt.mate) {
					t.Errorf("batch mate %s's human rating %q, want %s", mate.ExternalID, m, fmtScore(tt.mate))
				}
				if tt.note != "" && !strings.Contains(body, tt.note) {
					t.Errorf("the page does not say where the rating comes from: want %q", tt.note)
				}
				if tt.note == "" && strings.Contains(body, `data-testid="human-source"`) {
					t.Errorf("the imported column is named as another source")
				}
				// So does the batch page, for every sample of the batch.
				batch := env.get(fmt.Sprintf("/runs/%d/batches/%d", run.ID, b.ID)).Body.String()
				for _, c := range []struct {
					row  models.DatasetRow
					want float64
				}{{rows[0], tt.want}, {mate, tt.mate}} {
					re := regexp.MustCompile(fmt.Sprintf(`/runs/%d/samples/%d">%s</a></td><td class="num">[^<]*</td><td class="num" data-testid="batch-human">([^<]*)<`,
						run.ID, c.row.ID, regexp.QuoteMeta(c.row.ExternalID)))
					if m := re.FindStringSubmatch(batch); m == nil || m[1] != fmtScore(c.want) {
						t.Errorf("batch page's human rating of %s %q, want %s", c.row.ExternalID, m, fmtScore(c.want))
					}
				}
				// The report shows the same rating for the sample.
				rep, err := report.Build(ctx, env.db, env.ws.ID, run.ID)
				must(t, err)
				for _, s := range rep.Criteria[0].Samples {
					if s.RowID == rows[0].ID && (s.Human == nil || fmtScore(*s.Human) != fmtScore(tt.want)) {
						t.Errorf("the report's human rating %v, the page's want %s", s.Human, fmtScore(tt.want))
					}
				}
			})
		}
	})
}

// fmtScore writes a score as the sample page does (two decimals).
func fmtScore(v float64) string { return fmt.Sprintf("%.2f", v) }
