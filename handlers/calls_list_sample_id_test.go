package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestCallsListNamesSampleWiseUnitsByTheirID: the list of a G-Eval,
// LLM-Eval or CloserLook run's calls named each unit "Sample 1",
// "Sample 2"… by its number, which restarts with each criterion and is
// no id of the data, while the unit's own page says "sample demo-01": a
// reviewer could not find a sample's call in the list. Each is now named
// by the sample's id; a BatchEval run's batches keep their numbers.
func TestCallsListNamesSampleWiseUnitsByTheirID(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		rows, err := env.db.ListDatasetRows(t.Context(), d.dataset.ID, 0, 0)
		must(t, err)
		ids := map[string]bool{}
		for _, r := range rows {
			ids[r.ExternalID] = true
		}
		link := regexp.MustCompile(`data-testid="batch-row-link">\s*([^<]*?)\s*</a>`)
		for _, tt := range []struct {
			method string
			want   func(name string) bool
			what   string
		}{
			{"geval", func(n string) bool { return strings.HasPrefix(n, "Sample ") && ids[strings.TrimPrefix(n, "Sample ")] }, "Sample <a sample's id>"},
			{"llmeval", func(n string) bool { return strings.HasPrefix(n, "Sample ") && ids[strings.TrimPrefix(n, "Sample ")] }, "Sample <a sample's id>"},
			{"batcheval", func(n string) bool { return regexp.MustCompile(`^Batch \d+$`).MatchString(n) }, "Batch <number>"},
		} {
			t.Run(tt.method, func(t *testing.T) {
				f := d.launchForm("1", "10")
				f.Set("method", tt.method)
				f.Set("use_logprobs", "1")
				f.Set("llmeval_scale", "0-5")
				run := env.waitRun(env.launch(f), 60*time.Second)
				if run.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s)", run.Status, run.Error)
				}
				rec := env.get(fmt.Sprintf("/runs/%d/batches", run.ID))
				if rec.Code != http.StatusOK {
					t.Fatalf("calls list: %d", rec.Code)
				}
				names := link.FindAllStringSubmatch(rec.Body.String(), -1)
				if len(names) == 0 {
					t.Fatal("the calls list has no unit")
				}
				for _, m := range names {
					if !tt.want(m[1]) {
						t.Errorf("a unit is listed as %q, want %s", m[1], tt.what)
						break
					}
				}
			})
		}
	})
}
