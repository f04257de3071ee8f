package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// openStore opens the database at dsn as a server process does at start,
// River's schema included.
func openStore(t *testing.T, dsn string) *models.DB {
	t.Helper()
	return dbtest.OpenDSN(t, dsn, func(ctx context.Context, db *models.DB) error { return runner.Migrate(ctx, db, nil) })
}

// TestFiguresSameAfterRestart: the figures a run shows are the same bytes
// after a server restart. The report is computed and shown by one process
// (its figures fresh from the scores, and kept in its memory), then a new
// store is opened on the same database, as after a restart, and a new
// server's pages and exports must match byte for byte: the run page's
// results, the JSON and CSV exports, the API's results, a sample page, the
// experiment page and its API, and the compare page.
func TestFiguresSameAfterRestart(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			x := env.demoExperiment()
			for _, r := range []models.Run{x.batchEval, x.gEval} {
				if r.Status != models.RunSucceeded {
					t.Fatalf("run %s: %s (%s)", r.Name, r.Status, r.Error)
				}
			}
			rows, err := env.db.ListDatasetRows(context.Background(), env.demo().dataset.ID, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, r := range []models.Run{x.batchEval, x.gEval} {
				paths = append(paths,
					fmt.Sprintf("/runs/%d/export.json", r.ID),
					fmt.Sprintf("/runs/%d/export.csv", r.ID),
					fmt.Sprintf("/api/v1/runs/%d/results", r.ID),
					fmt.Sprintf("/runs/%d/samples/%d", r.ID, rows[0].ID),
					fmt.Sprintf("/runs/%d", r.ID),
				)
			}
			paths = append(paths,
				fmt.Sprintf("/experiments/%d", x.exp.ID),
				fmt.Sprintf("/api/v1/experiments/%d", x.exp.ID),
				fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", x.batchEval.ID, x.gEval.ID),
				fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=0", x.batchEval.ID, x.gEval.ID),
			)
			get := func(e http.Handler, path string) string {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
				}
				return rec.Body.String()
			}
			before := map[string]string{}
			for _, p := range paths {
				before[p] = get(env.e, p)
			}

			// A restart: a new store on the same database, a new server,
			// which reads the figures stored when the runs finished. Then
			// another with those stored figures gone, which computes them
			// afresh from the scores.
			for _, restart := range []struct {
				name  string
				clear bool
			}{{"a restart", false}, {"a restart without the stored figures", true}} {
				db := openStore(t, dsn)
				if restart.clear {
					for _, table := range []string{"run_summaries", "run_sample_results", "run_sample_sets"} {
						if err := db.Gorm.Exec("DELETE FROM " + table).Error; err != nil {
							t.Fatal(err)
						}
					}
				}
				r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler), PollInterval: 50 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				_, e := newTestHandlers(t, db, r, env.ws, env.sim.URL)
				for _, p := range paths {
					a, b := before[p], get(e, p)
					var id int64
					if n, _ := fmt.Sscanf(p, "/runs/%d", &id); n == 1 && p == fmt.Sprintf("/runs/%d", id) {
						// The page's header says how long ago the run ran.
						a, b = resultsSection(t, a, id), resultsSection(t, b, id)
					}
					if a != b {
						t.Errorf("%s differs after %s:\n%s", p, restart.name, firstDifference(a, b))
					}
				}
			}
		})
	}
}
