package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestCostBeforeFirstPaidCall: a run of a judge with prices that has paid
// for no call yet (queued, or waiting for a judge that is down, or paused
// before its first answer) costs $0.00 so far, on its page and in the
// spending-cap note beside Continue (a cap binds only with prices), as its probes already read; "unknown"
// is for a judge without prices only.
func TestCostBeforeFirstPaidCall(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Priced", 10)
		in, out := 2.5, 10.0
		cap := 5.0
		runCost := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`)
		for _, tc := range []struct {
			name   string
			priced bool
			want   string
		}{
			{"priced judge", true, "$0.00"},
			{"judge without prices", false, "unknown"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, noisy(d.human, 0.5, 1), func(r *models.Run) {
					r.Simulated, r.JudgeSnapshot.Simulated = false, false
					r.Settings.SpendCapUSD = &cap
					if tc.priced {
						r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
					}
				})
				// Paused before any call was paid for: nothing counted.
				must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, cost_usd = NULL, calls = 0, prompt_tokens = 0, completion_tokens = 0 WHERE id = ?`,
					models.RunPaused, run.ID).Error)
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				m := runCost.FindStringSubmatch(body)
				if m == nil || m[1] != tc.want {
					t.Errorf("cost so far = %v, want %q", m, tc.want)
				}
				// A cap binds only with prices; its note then says what
				// the run has spent.
				if note := "more than the run has spent so far (" + tc.want + ")"; tc.priced && !strings.Contains(body, note) {
					t.Errorf("spending cap note lacks %q", note)
				}
			})
		}
	})
}

// TestPricedRunWithNothingPaidReadsZeroEverywhere: a run of a judge with
// prices that ended before it paid for any call (cancelled while queued:
// no cost counted, cost_usd NULL) cost $0, and reads so wherever its cost
// is shown, as its page already said (regression: the API's run object,
// the JSON export, the experiment row and the compare page read it as
// unknown, a price missing, while the run page said $0.00). A judge
// without prices stays unknown.
func TestPricedRunWithNothingPaidReadsZeroEverywhere(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Cancelled early", 10)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Cancelled before a call"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		in, out := 2.5, 10.0
		stored := func(name string, priced bool) models.Run {
			run := env.storedRun(d, name, noisy(d.human, 0.5, 1), func(r *models.Run) {
				r.ExperimentID, r.Simulated, r.JudgeSnapshot.Simulated = &e.ID, false, false
				if priced {
					r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
				}
			})
			must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, cost_usd = NULL, calls = 0, cached_calls = 0, prompt_tokens = 0, completion_tokens = 0 WHERE id = ?`,
				models.RunCancelled, run.ID).Error)
			got, err := env.db.GetRun(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		priced, unpriced := stored("Priced, nothing paid", true), stored("Unpriced, nothing paid", false)
		if priced.CostUSD != nil || !priced.Finished() {
			t.Fatalf("fixture: cost %v, finished %v; want a finished run with no cost counted", priced.CostUSD, priced.Finished())
		}
		// Every page is read before an account exists (the local user of
		// a server without accounts reads them); then the API.
		cmp := env.get(fmt.Sprintf("/compare?a=%d&b=%d", priced.ID, unpriced.ID)).Body.String()
		exp := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		runPage, apiRun, export := map[int64]string{}, map[int64]map[string]json.RawMessage{}, map[int64]string{}
		for _, r := range []models.Run{priced, unpriced} {
			runPage[r.ID] = env.get(fmt.Sprintf("/runs/%d", r.ID)).Body.String()
			var got map[string]json.RawMessage
			if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/runs/%d", r.ID)).Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			apiRun[r.ID] = got
			export[r.ID] = env.get(fmt.Sprintf("/runs/%d/export.json", r.ID)).Body.String()
		}
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@nothing-paid.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		var apiCmp struct {
			A map[string]json.RawMessage `json:"a_cost"`
			B map[string]json.RawMessage `json:"b_cost"`
		}
		if rec := api.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", priced.ID, unpriced.ID), tok); rec.Code != http.StatusOK ||
			json.Unmarshal(rec.Body.Bytes(), &apiCmp) != nil {
			t.Fatalf("API compare: %d %.300s", rec.Code, rec.Body)
		}
		apiCost := map[string]map[string]json.RawMessage{"a": apiCmp.A, "b": apiCmp.B}
		for _, tc := range []struct {
			run                         models.Run
			page, json, perSample, side string
		}{
			{priced, "$0.00", "0", "$0.00", "a"},
			{unpriced, "unknown", "null", "unknown", "b"},
		} {
			if m := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`).FindStringSubmatch(runPage[tc.run.ID]); m == nil || m[1] != tc.page {
				t.Errorf("%s: run page cost %v, want %q", tc.run.Name, m, tc.page)
			}
			if got := string(apiRun[tc.run.ID]["cost_usd"]); got != tc.json {
				t.Errorf("%s: API cost_usd %s, want %s", tc.run.Name, got, tc.json)
			}
			if !regexp.MustCompile(`"run":\s*\{[^{}]*"cost_usd":\s*` + tc.json + `[,}\s]`).MatchString(export[tc.run.ID]) {
				t.Errorf("%s: JSON export's run lacks cost_usd %s", tc.run.Name, tc.json)
			}
			row := rowOf(exp, tc.run.Name)
			if !strings.Contains(row, `data-testid="cost-per-sample">`+tc.perSample) {
				t.Errorf("%s: experiment row lacks cost per sample %q:\n%s", tc.run.Name, tc.perSample, row)
			}
			if tc.json == "0" && strings.Contains(row, "total unknown") {
				t.Errorf("%s: experiment row says its total is unknown:\n%s", tc.run.Name, row)
			}
			i := strings.Index(cmp, `data-testid="compare-cost-`+tc.side+`"`)
			if i < 0 {
				t.Fatalf("compare page shows no cost for %s", tc.run.Name)
			}
			line := cmp[i:min(len(cmp), i+600)]
			line = line[:strings.Index(line, "</p>")]
			if !strings.Contains(line, tc.perSample+" per sample") && !strings.Contains(line, tc.perSample+"</") {
				t.Errorf("%s: compare page cost %q lacks %q per sample", tc.run.Name, line, tc.perSample)
			}
			if got := string(apiCost[tc.side]["cost_per_sample_usd"]); got != tc.json && !(tc.json == "null" && got == "") {
				t.Errorf("%s: API compare %s_cost.cost_per_sample_usd %s, want %s", tc.run.Name, tc.side, got, tc.json)
			}
		}
	})
}
