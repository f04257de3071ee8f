package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// The run page's facts link the run's dataset and rubric to their pages
// (QA: both were plain text); a run without a stored rubric names none and
// links none. A share link's page shows the same facts unlinked: it must
// not lead a visitor into the dashboard.
func TestRunFactsLinkDatasetAndRubric(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated replies", 30)
		rubric := env.demo().rubric
		facts := regexp.MustCompile(`(?s)<dl class="run-facts">.*?</dl>`)
		datasetLink := fmt.Sprintf(`<dt>Dataset</dt><dd><a href="/datasets/%d" data-testid="run-dataset-link">Rated replies</a></dd>`, d.ds.ID)
		rubricLink := fmt.Sprintf(`<dt>Rubric</dt><dd><a href="/rubrics/%d/edit" data-testid="run-rubric-link">%s</a></dd>`, rubric.ID, rubric.Name)
		for _, tc := range []struct {
			name       string
			withRubric bool
		}{
			{"stored rubric", true},
			{"no stored rubric (command line)", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, noisy(d.human, 0.5, 3), func(r *models.Run) {
					if tc.withRubric {
						r.RubricID = &rubric.ID
					}
				})
				got := facts.FindString(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String())
				if !strings.Contains(got, datasetLink) {
					t.Errorf("the facts do not link the dataset (%s):\n%s", datasetLink, got)
				}
				if strings.Contains(got, rubricLink) != tc.withRubric {
					t.Errorf("rubric linked %v, want %v:\n%s", !tc.withRubric, tc.withRubric, got)
				}
				if !tc.withRubric && strings.Contains(got, "/rubrics/") {
					t.Errorf("a run without a stored rubric links one:\n%s", got)
				}
				_, token, err := env.db.CreateShareLink(context.Background(), models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
				if err != nil {
					t.Fatal(err)
				}
				shared := facts.FindString(env.get("/s/" + token).Body.String())
				if shared == "" || strings.Contains(shared, "<a ") {
					t.Errorf("the shared page's facts are missing or link somewhere:\n%s", shared)
				}
			})
		}
	})
}
