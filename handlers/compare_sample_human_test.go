package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestCompareSampleHumanFollowsRunAsReport: the compare page's view of one
// sample showed the imported column's rating even after run A's report
// was recomputed with browser reviews, while the comparison pairs the
// scores with the report's rating (the mean of the imported rating and
// the reviewers'). It now shows the report's rating, as the run's own
// sample page does, and says where it comes from.
func TestCompareSampleHumanFollowsRunAsReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		crit := a.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, a.DatasetID, 0, 0)
		must(t, err)
		row := rows[0]
		imported := *row.Ratings[crit.HumanColumn]
		far := crit.Lo
		if imported < (crit.Lo+crit.Hi)/2 {
			far = crit.Hi
		}
		for _, who := range []string{"Ann", "Bo"} {
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: a.DatasetID, RowID: row.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, RunID: &a.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &far})
			must(t, err)
		}
		page := fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%d&criterion=0", a.ID, b.ID, row.ID)
		human := regexp.MustCompile(`data-testid="human">([^<]*)<`)
		source := regexp.MustCompile(`data-testid="human-source">([^<]*)<`)
		for _, tt := range []struct {
			source string
			want   float64
			note   string
		}{
			{"imported", imported, "(column " + crit.HumanColumn + ", as run A's report uses it)"},
			{"both", (imported + 2*far) / 3, "(mean of the imported column and browser ratings, as run A's report uses them)"},
		} {
			t.Run(tt.source, func(t *testing.T) {
				if tt.source != "imported" {
					rec := env.postForm(fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {tt.source}})
					if rec.Code != http.StatusSeeOther {
						t.Fatalf("recompute: %d", rec.Code)
					}
				}
				rec := env.get(page)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d", page, rec.Code)
				}
				body := rec.Body.String()
				if got := human.FindStringSubmatch(body); got == nil || got[1] != fmtScore(tt.want) {
					t.Errorf("compare sample page's human rating %q, want %s", got, fmtScore(tt.want))
				}
				if got := source.FindStringSubmatch(body); got == nil || strings.TrimSpace(got[1]) != tt.note {
					t.Errorf("compare sample page says the rating comes from %q, want %q", got, tt.note)
				}
				// So does the comparison's table, for the same sample.
				list := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=0&limit=1000", a.ID, b.ID)).Body.String()
				re := regexp.MustCompile(fmt.Sprintf(`row=%d" data-testid="compare-sample-link">[^<]*</a></td><td class="small">[^<]*</td><td class="num">([^<]*)<`, row.ID))
				if m := re.FindStringSubmatch(list); m == nil || m[1] != fmtScore(tt.want) {
					t.Errorf("compare table's human rating %q, want %s", m, fmtScore(tt.want))
				}
				// The run's report and its sample page give the same rating.
				rep, err := report.Build(ctx, env.db, env.ws.ID, a.ID)
				must(t, err)
				for _, s := range rep.Criteria[0].Samples {
					if s.RowID == row.ID && (s.Human == nil || fmtScore(*s.Human) != fmtScore(tt.want)) {
						t.Errorf("run A's report's human rating %v, want %s", s.Human, fmtScore(tt.want))
					}
				}
				own := env.get(fmt.Sprintf("/runs/%d/samples/%d", a.ID, row.ID)).Body.String()
				if got := human.FindStringSubmatch(own); got == nil || got[1] != fmtScore(tt.want) {
					t.Errorf("run A's sample page's human rating %q, want %s", got, fmtScore(tt.want))
				}
			})
		}
	})
}
