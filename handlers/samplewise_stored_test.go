package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/report"
)

// TestSampleWiseCountsServedFromTheStoredSummary: a finished CloserLook
// run's count of the sampled answers behind its scores (and a G-Eval
// run's sources) is stored with its figures and read from there by its
// page and its JSON export. Before, every export (and the page, once per
// process) scanned every unit's details: at a million units, seconds at
// each view. The test changes the stored units' details after the
// figures are stored; what the page and the export say must not move.
func TestSampleWiseCountsServedFromTheStoredSummary(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		for _, m := range []struct{ method, samples, want string }{
			{"closerlook", "3", "answers sampled for this criterion, those of its missing scores included"},
			{"geval", "3", "was estimated from"},
		} {
			run := env.waitRun(env.launch(d.methodForm(m.method, map[string]string{"samples": m.samples})), 60*time.Second)
			must(t, report.StoreStats(ctx, env.db, env.ws.ID, run.ID))
			page := fmt.Sprintf("/runs/%d", run.ID)
			export := page + "/export.json"
			before := map[string]string{}
			for _, u := range []string{page, export} {
				rec := env.getAs(u)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s GET %s: %d", m.method, u, rec.Code)
				}
				before[u] = rec.Body.String()
			}
			if !strings.Contains(before[page], m.want) {
				t.Fatalf("%s: the run page does not count its units (%q): the test shows nothing", m.method, m.want)
			}
			if !strings.Contains(before[export], `"sampled_answers"`) && !strings.Contains(before[export], `"geval_sources"`) {
				t.Fatalf("%s: the export has no unit counts: the test shows nothing", m.method)
			}
			// The units as a scan would now read them: no sampled answers,
			// no G-Eval source.
			must(t, env.db.Gorm.Exec(`UPDATE run_batches SET details = '{}' WHERE run_id = ?`, run.ID).Error)
			// A new process's handlers keep nothing in memory.
			fresh := *env
			fresh.h, fresh.e = newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
			for _, u := range []string{page, export} {
				rec := fresh.getAs(u)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s GET %s after: %d", m.method, u, rec.Code)
				}
				got := rec.Body.String()
				if u == page && !strings.Contains(got, m.want) {
					t.Errorf("%s: the run page lost its unit counts when the units changed: they were read again, not from the stored summary", m.method)
				}
				if u == export && got != before[u] {
					t.Errorf("%s: the JSON export changed when the units changed: its counts were read again, not from the stored summary", m.method)
				}
			}
		}
	})
}
