package handlers

import (
	"context"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestShareFormsAreHeaded: the share links page's three forms (a run, a
// comparison, an experiment) followed one another under "New link" with
// nothing between them but their buttons; on a phone their fields ran on
// as one long form. Each has a heading that names it.
func TestShareFormsAreHeaded(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	d := env.ratedDataset("Headed", 3)
	for _, name := range []string{"First", "Second"} {
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
			Settings: evaluator.DefaultSettings(), Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
				Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
		must(t, env.db.CreateRun(ctx, &run, nil))
	}
	must(t, env.db.CreateExperiment(ctx, &models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Exp"}))
	body := env.get("/shares").Body.String()
	for _, tc := range []struct{ form, heading string }{
		{"share-run-form", "A run"},
		{"share-compare-form", "A comparison of two runs"},
		{"share-experiment-form", "An experiment"},
	} {
		re := regexp.MustCompile(`<h3 id="([a-z-]+)">` + regexp.QuoteMeta(tc.heading) + `</h3><form [^>]*data-testid="` + tc.form + `" aria-labelledby="([a-z-]+)"`)
		m := re.FindStringSubmatch(body)
		if m == nil || m[1] != m[2] {
			t.Errorf("the %s is not headed %q (and labelled by it)", tc.form, tc.heading)
		}
	}
}
