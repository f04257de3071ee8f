package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestHalfwayCostPageRoundsExport: a cost with more than six decimals
// (0.12349951) is exported rounded to the micro-dollar, 0.1235, which a
// reader rounds half away from zero to $0.124; the run page and the run
// list showed $0.123, rounding the unrounded amount instead.
func TestHalfwayCostPageRoundsExport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Half-way cost", 3)
		cost := 0.12349951
		run := env.storedRun(d, "Half-way", d.human, func(r *models.Run) {
			r.Simulated, r.Calls, r.PromptTokens, r.CostUSD = false, 2, 300, &cost
		})
		export := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.String()
		if !strings.Contains(export, `"cost_usd": 0.1235,`) {
			t.Fatalf("JSON export: want \"cost_usd\": 0.1235: %.200s", export[max(0, strings.Index(export, "cost_usd")-20):])
		}
		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if m := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`).FindStringSubmatch(page); m == nil || m[1] != "$0.124" {
			t.Errorf("run page: cost %v, want $0.124 (the exported 0.1235 rounded)", m)
		}
		if list := env.get("/runs").Body.String(); !strings.Contains(list, `data-testid="run-list-cost">$0.124<`) {
			t.Errorf("run list: cost is not $0.124 (the exported 0.1235 rounded)")
		}
	})
}
