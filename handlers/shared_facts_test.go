package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSharedReportHasCostAndSystemLevel: a run's shared page and its
// downloadable report say what the run's calls cost and, when the samples
// name their system, the system-level correlation, as the run page does
// (before, both were left out of every shared report).
func TestSharedReportHasCostAndSystemLevel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("systems", 30)
		in, out := 2.5, 10.0
		run := env.storedRun(d, "priced run", noisy(d.human, 0.5, 7), func(r *models.Run) {
			r.Simulated, r.JudgeSnapshot.Simulated = false, false
			r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
			cost := 0.0425
			r.Calls, r.PromptTokens, r.CompletionTokens, r.CostUSD = 12, 13000, 1000, &cost
		})
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/s/" + token, "/s/" + token + "/report.html", fmt.Sprintf("/runs/%d/report.html", run.ID)} {
			body := env.get(path).Body.String()
			for _, w := range []string{
				`data-testid="report-calls">12<`,
				`data-testid="report-tokens">13,000 prompt + 1,000 completion<`,
				`data-testid="report-cost">$0.0425<`,
				`data-testid="report-system-level"`,
				"System-level correlation (systems in system)",
			} {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %q", path, w)
				}
			}
		}
	})
}
