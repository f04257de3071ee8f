package handlers

import (
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReportCacheOnlyKeepsFinishedRuns: a finished run's report is built
// once and reused; a change to the run (an experiment it joins) or another
// grouping builds it again.
func TestReportCacheOnlyKeepsFinishedRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		id := env.launch(env.demo().launchForm("1", "10"))
		if run := env.waitRun(id, 60*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run %s", run.Status)
		}
		a, err := env.h.buildReport(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := env.h.buildReport(ctx, id, "")
		if a != b {
			t.Errorf("a finished run's report was built twice")
		}
		if g, _ := env.h.buildReport(ctx, id, "id"); g == a {
			t.Errorf("another grouping returned the cached report")
		}
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: a.Run.DatasetID, Name: "x"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		if err := env.db.SetRunExperiment(ctx, env.ws.ID, id, e.ID); err != nil {
			t.Fatal(err)
		}
		c, _ := env.h.buildReport(ctx, id, "")
		if c == a || c.Run.ExperimentID == nil || *c.Run.ExperimentID != e.ID {
			t.Errorf("the cached report outlived a change to its run")
		}
	})
}
