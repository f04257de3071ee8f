package handlers

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestMoreTablesSayWhyAValueIsMissing: after the run page's Human and
// Final columns said why a value is missing, its per-round score columns
// and its |Difference| column, a share link's samples table and a share
// link's comparison still showed a bare "—" (read as a zero or a bug).
// Each such cell now shows a short word ("no score", "not rated") with
// the reason in its title and for screen readers, escaped.
func TestMoreTablesSayWhyAValueIsMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("2", "5")), 60*time.Second)
		b := env.waitRun(env.launch(d.launchForm("2", "5")), 60*time.Second)
		runLink := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(a.ID, 10)}, "expires": {"7d"}})
		cmpLink := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(a.ID, 10)},
			"other_run_id": {strconv.FormatInt(b.ID, 10)}, "expires": {"7d"}})
		// A finished run, whose page reads its stored per-sample results.
		done := env.waitRun(env.launch(d.launchForm("2", "5")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := a.RubricSnapshot.Criteria[0]
		unrated, unscored, oneRound := rows[0], rows[1], rows[2]
		for k := range unrated.Ratings {
			if k == crit.HumanColumn || strings.HasPrefix(k, crit.HumanColumn+"@") {
				delete(unrated.Ratings, k)
			}
		}
		must(t, env.db.Gorm.Model(&models.DatasetRow{ID: unrated.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: unrated.Ratings}).Error)
		for _, run := range []models.Run{a, b} {
			must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND row_id = ? AND criterion_index = 0`, run.ID, unscored.ID).Error)
			must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND row_id = ? AND criterion_index = 0 AND round = 1`, run.ID, oneRound.ID).Error)
			// A running run's pages read the report, not the stored results.
			must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", models.RunRunning).Error)
			env.h.forgetReports(run.ID)
		}

		must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND row_id = ? AND criterion_index = 0 AND round = 1`, done.ID, oneRound.ID).Error)
		// A later finishing time makes the stored results out of date.
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", done.ID).Update("finished_at", done.FinishedAt.Add(time.Second)).Error)
		env.h.forgetReports(done.ID)

		cell := func(word, why, testID string) string {
			why = escapeText(why)
			return `<span class="small muted" title="` + why + `" data-testid="` + testID + `">` + word + `<span class="sr-only"> (` + why + `)</span></span>`
		}
		humanWhy := "no human rating in the dataset for this sample"
		finalWhy := "no round gave a readable score: the judge's answer could not be read or its call failed (the sample's page says which)"
		roundWhy := "the judge's answer in this round could not be read, or its call failed (the sample's page says which)"
		notRated := cell("not rated", humanWhy, "human-missing-short")
		noFinal := cell("no score", finalWhy, "final-missing-short")
		// The comparisons read the running runs' reports built whole, which
		// count each sample's missing rounds: the run page's reason.
		cmpWhy := finalWhy
		noDiff := cell("none", "no difference without both runs' scores: "+a.Name+" has no score ("+cmpWhy+"); "+b.Name+" has no score ("+cmpWhy+")", "diff-missing-short")
		pages := []struct {
			name, path string
			shared     bool
			want       map[string]int // cell: how many times
		}{
			{"run page", fmt.Sprintf("/runs/%d?criterion=0", a.ID), false, map[string]int{
				notRated: 1, noFinal: 1,
				// The unscored sample's two rounds and the other's second.
				cell("no score", roundWhy, "round-missing-short"):                                                                        3,
				cell("not rated", "no difference without both a score and a rating: "+humanWhy, "diff-missing-short"):                    1,
				cell("no score", "no difference without both a score and a rating: no final score ("+finalWhy+")", "diff-missing-short"): 1,
			}},
			// Its stored results know the round was answered: not "the run
			// ended before it".
			{"finished run's page", fmt.Sprintf("/runs/%d?criterion=0", done.ID), false, map[string]int{
				cell("no score", roundWhy, "round-missing-short"): 1}},
			{"share link's samples table", runLink, true, map[string]int{notRated: 1, noFinal: 1}},
			{"share link's comparison", cmpLink + "?criterion=0", true, map[string]int{notRated: 1,
				cell("no score", cmpWhy, "a-missing-short"): 1, cell("no score", cmpWhy, "b-missing-short"): 1, noDiff: 1}},
			// The dashboard's comparison said why A or B is missing, not
			// why their difference is.
			{"comparison", fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", a.ID, b.ID), false, map[string]int{noDiff: 1}},
		}
		bare := regexp.MustCompile(`<td class="num">\s*(<strong>)?—`)
		for _, p := range pages {
			t.Run(p.name, func(t *testing.T) {
				rec := env.get(p.path)
				if p.shared {
					rec = env.getAs(p.path)
				}
				if rec.Code != 200 {
					t.Fatalf("%s: %d", p.path, rec.Code)
				}
				body := rec.Body.String()
				for w, n := range p.want {
					if got := strings.Count(body, w); got != n {
						t.Errorf("%s shows %d times, want %d:\n%s", p.path, got, n, w)
					}
				}
				if m := bare.FindString(body); m != "" {
					i := strings.Index(body, m)
					t.Errorf("%s still shows a bare dash for a missing value: %q", p.path, body[max(0, i-600):i+40])
				}
			})
		}
	})
}
