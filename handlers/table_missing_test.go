package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestTablesSayWhyAValueIsMissing: the run page's samples table and the
// /compare samples table showed a bare "—" for a missing human rating or
// a missing score; only the sample page said why. Each missing cell now
// shows a short word ("not rated", "no score") with the reason, in the
// sample page's words, in its title and for screen readers (escaped).
func TestTablesSayWhyAValueIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		b := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := a.RubricSnapshot.Criteria[0]
		unrated, unscored := rows[0], rows[1]
		for k := range unrated.Ratings {
			if k == crit.HumanColumn || strings.HasPrefix(k, crit.HumanColumn+"@") {
				delete(unrated.Ratings, k)
			}
		}
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: unrated.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: unrated.Ratings}).Error)
		for _, run := range []models.Run{a, b} {
			must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND row_id = ? AND criterion_index = 0`, run.ID, unscored.ID).Error)
			// A running run's pages read the report, not the stored results.
			must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", models.RunRunning).Error)
			env.h.forgetReports(run.ID)
		}
		notRated := `<span class="small muted" title="no human rating in the dataset for this sample" data-testid="human-missing-short">not rated<span class="sr-only"> (no human rating in the dataset for this sample)</span></span>`
		noScore := func(testID string) string {
			// The compare page counts a running run's missing rounds as
			// its run page does, and says the same.
			why := escapeText("no round gave a readable score: the judge's answer could not be read or its call failed (the sample's page says which)")
			return `<span class="small muted" title="` + why + `" data-testid="` + testID + `">no score<span class="sr-only"> (` + why + `)</span></span>`
		}
		pages := []struct {
			name, path string
			want       []string
		}{
			{"run page", fmt.Sprintf("/runs/%d?criterion=0", a.ID), []string{notRated, noScore("final-missing-short")}},
			{"compare", fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", a.ID, b.ID), []string{notRated, noScore("a-missing-short"), noScore("b-missing-short")}},
		}
		for _, p := range pages {
			t.Run(p.name, func(t *testing.T) {
				rec := env.get(p.path)
				if rec.Code != 200 {
					t.Fatalf("%s: %d", p.path, rec.Code)
				}
				body := rec.Body.String()
				for _, w := range p.want {
					if n := strings.Count(body, w); n != 1 {
						t.Errorf("%s shows %d times, want once:\n%s", p.path, n, w)
					}
				}
			})
		}
	})
}
