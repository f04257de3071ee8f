package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestRunShowsItsProbeCalls: the probes a run sent while it waited for its
// judge (paid calls when answered, once counted nowhere) show beside its
// counters on the run page, in the API's run object and in the JSON
// export, apart from its calls, tokens and cost; a run without probes
// shows 0 and exports as before.
func TestRunShowsItsProbeCalls(t *testing.T) {
	in, out := 1.0, 2.0
	cases := []struct {
		name                       string
		probes, prompt, completion int
		wantPage                   string
		wantAPI                    []string
		wantExport                 string // "" for none
	}{
		{name: "probed through an outage", probes: 4, prompt: 40, completion: 8,
			wantPage:   "4 (48 tokens, " + web.Money(56e-6) + ")",
			wantAPI:    []string{`"probe_calls":4`, `"probe_prompt_tokens":40`, `"probe_completion_tokens":8`, `"probe_cost_usd":0.000056`},
			wantExport: `"probes": {`},
		{name: "never waited", wantPage: ">0<",
			wantAPI: []string{`"probe_calls":0`, `"probe_prompt_tokens":0`, `"probe_completion_tokens":0`, `"probe_cost_usd":0,`}},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Probed", 3)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, d.human, func(r *models.Run) {
					r.Simulated, r.Calls, r.PromptTokens, r.CompletionTokens = false, 1, 300, 30
					r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
					r.ProbeCalls, r.ProbePromptTokens, r.ProbeCompletionTokens = tc.probes, tc.prompt, tc.completion
				})
				page := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", env.sessionCookie(owner)).Body.String()
				i := strings.Index(page, `data-testid="probe-calls"`)
				if i < 0 {
					t.Fatalf("the run page shows no probe calls: %.600s", page)
				}
				if shown := page[i:min(len(page), i+120)]; !strings.Contains(shown, tc.wantPage) {
					t.Errorf("the run page shows probe calls as %q, want %q", shown, tc.wantPage)
				}
				rec := api.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token)
				if rec.Code != http.StatusOK {
					t.Fatalf("API run: %d %.300s", rec.Code, rec.Body)
				}
				for _, want := range tc.wantAPI {
					if !strings.Contains(rec.Body.String(), want) {
						t.Errorf("API run lacks %s: %.2000s", want, rec.Body)
					}
				}
				// The batches' figures are left as they were.
				if !strings.Contains(rec.Body.String(), `"calls":1,`) || !strings.Contains(rec.Body.String(), `"prompt_tokens":300,`) {
					t.Errorf("API run's calls or tokens changed: %.2000s", rec.Body)
				}
				export := env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.json", run.ID), nil, "", env.sessionCookie(owner)).Body.String()
				if got := strings.Contains(export, `"probes"`); got != (tc.wantExport != "") || (got && !strings.Contains(export, tc.wantExport)) {
					t.Errorf("export's probes: %v, want %q", got, tc.wantExport)
				}
			})
		}
	})
}
