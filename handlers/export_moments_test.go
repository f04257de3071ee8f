package handlers

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestExportedMomentsAreTheSameOnEveryDatabase: the moments a run's JSON
// export and the API's answers carry are written in UTC to the
// microsecond, with six digits, on SQLite as on PostgreSQL, so the same
// data gives the same bytes on both (regression: "created_at" said
// nanoseconds on SQLite, which keeps what Go gave it, and microseconds on
// PostgreSQL, which keeps no more).
func TestExportedMomentsAreTheSameOnEveryDatabase(t *testing.T) {
	// Nanoseconds that are not a whole microsecond, as time.Now() gives.
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	started := at.Add(-90*time.Second - 654321*time.Nanosecond)
	const want = "2026-03-04T05:06:07.123456Z"
	moment := regexp.MustCompile(`"(created_at|updated_at|started_at|finished_at|at|as_of)":\s*"([^"]*)"`)
	ids := regexp.MustCompile(`"(id|run_id|experiment_id|project_id|dataset_id)":\s*\d+`)
	pathIDs := regexp.MustCompile(`/\d+`)
	var mu sync.Mutex
	got := map[string]map[string]string{} // database -> path -> answer, ids masked
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Moments", 6)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Moments"}
		must(t, env.db.CreateExperiment(ctx, &e))
		run := env.storedRun(d, "Moments", []float64{1, 2, 3, 4, 5, 1}, func(r *models.Run) { r.ExperimentID = &e.ID })
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"UPDATE runs SET created_at = ?, started_at = ?, finished_at = ? WHERE id = ?", []any{at, started, at, run.ID}},
			{"UPDATE experiments SET created_at = ? WHERE id = ?", []any{at, e.ID}},
			// Every dataset and rubric: the project's answer lists them.
			{"UPDATE datasets SET created_at = ? WHERE project_id = ?", []any{at, env.project.ID}},
			{"UPDATE rubrics SET created_at = ?, updated_at = ? WHERE project_id = ?", []any{at, at, env.project.ID}},
			{"UPDATE projects SET created_at = ?, updated_at = ? WHERE id = ?", []any{at, at, env.project.ID}},
		} {
			must(t, env.db.Gorm.Exec(q.sql, q.args...).Error)
		}
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: run.ID, At: at, Kind: models.RunEventLeaseLost, Worker: "host-a/1", Message: "Worker host-a lost its lease."}))

		out := map[string]string{}
		for _, path := range []string{
			fmt.Sprintf("/runs/%d/export.json", run.ID),
			fmt.Sprintf("/api/v1/runs/%d/export.json", run.ID),
			fmt.Sprintf("/api/v1/runs/%d", run.ID),
			fmt.Sprintf("/api/v1/experiments/%d", e.ID),
			fmt.Sprintf("/api/v1/datasets/%d", d.ds.ID),
			fmt.Sprintf("/api/v1/projects/%d", env.project.ID),
		} {
			rec := env.get(path)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
			}
			body := rec.Body.String()
			found := moment.FindAllStringSubmatch(body, -1)
			if len(found) == 0 {
				t.Fatalf("GET %s carries no moment: %.300s", path, body)
			}
			set := 0
			for _, m := range found {
				if m[2] == want {
					set++
					continue
				}
				if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`).MatchString(m[2]) {
					t.Errorf("GET %s: %s is %q, want UTC with six digits of a second", path, m[1], m[2])
				}
			}
			if set == 0 {
				t.Errorf("GET %s: no moment says %s: %v", path, want, found)
			}
			// The envelope's elapsed seconds follow from the same moments.
			out[pathIDs.ReplaceAllString(path, "/ID")] = ids.ReplaceAllString(body, `"$1":ID`)
		}
		mu.Lock()
		got[t.Name()] = out
		mu.Unlock()
	})
	if len(got) < 2 {
		t.Skip("one database only: nothing to compare across databases")
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	a, b := got[names[0]], got[names[1]]
	for what, x := range a {
		if y := b[what]; x != y {
			t.Errorf("%s differs between %s and %s:\n%s", what, names[0], names[1], firstDifference(x, y))
		}
	}
}
