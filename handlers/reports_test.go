package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// TestCachedReportTakesDatasetRename: a finished run's JSON export states
// its dataset's name as it is now. A dataset renamed after the run ended
// (through any server process: here straight in the database, as another
// process would) used to keep its old name in the export of every process
// that had the run's report cached, while a process that had not cached
// it stated the new one.
func TestCachedReportTakesDatasetRename(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		id := env.launch(env.demo().launchForm("1", "10"))
		run := env.waitRun(id, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s", run.Status)
		}
		datasetOf := func() string {
			t.Helper()
			rec := env.get(fmt.Sprintf("/runs/%d/export.json", id))
			if rec.Code != http.StatusOK {
				t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
			}
			var doc struct {
				Report struct {
					Run struct {
						Dataset string `json:"dataset"`
					} `json:"run"`
				} `json:"report"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			return doc.Report.Run.Dataset
		}
		before := datasetOf() // caches the run's report
		if _, err := env.db.Rename(env.localCtx(), env.ws.ID, models.KindDataset, run.DatasetID, "Renamed <elsewhere>"); err != nil {
			t.Fatal(err)
		}
		if got := datasetOf(); got != "Renamed <elsewhere>" {
			t.Errorf("after the rename the export names dataset %q (before: %q), want the new name", got, before)
		}
	})
}
