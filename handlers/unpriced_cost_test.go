package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestUnpricedCostIsUnknownEverywhere: a run whose judge has no prices
// reads "unknown" (null in JSON) wherever its cost is shown, never $0,
// also when the answer cache answered some of its calls; the simulated
// judge's run reads $0, said to be simulated.
func TestUnpricedCostIsUnknownEverywhere(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		unpriced := func(run models.Run, calls, cached int) models.Run {
			run.Simulated = false
			run.JudgeSnapshot.Simulated = false
			run.JudgeSnapshot.PriceInputPerMTok, run.JudgeSnapshot.PriceOutputPerMTok = nil, nil
			run.Calls, run.CachedCalls, run.PromptTokens, run.CompletionTokens, run.CostUSD = calls, cached, 30000, 3000, nil
			run.CachedPromptTokens, run.CachedCompletionTokens = 500*cached, 50*cached
			if err := env.db.Gorm.WithContext(ctx).Model(&models.Run{ID: run.ID}).
				Select("simulated", "judge_snapshot", "calls", "prompt_tokens", "completion_tokens", "cost_usd",
					"cached_calls", "cached_prompt_tokens", "cached_completion_tokens").Updates(&run).Error; err != nil {
				t.Fatal(err)
			}
			return run
		}
		a := unpriced(x.batchEval, 60, 0)
		b := unpriced(x.gEval, 60, 20)
		for _, tc := range []struct {
			run  models.Run
			want string
		}{
			{a, "unknown"},
			{b, "unknown; 20 of 60 calls answered from the answer cache"},
		} {
			page := env.get(fmt.Sprintf("/runs/%d", tc.run.ID)).Body.String()
			if !strings.Contains(page, `data-testid="run-cost">`+tc.want+`<`) {
				i := strings.Index(page, `data-testid="run-cost"`)
				t.Errorf("run page of %s: cost %q, want %q", tc.run.Name, page[i:min(len(page), i+120)], tc.want)
			}
			if list := env.get("/runs").Body.String(); !strings.Contains(list, `data-testid="run-list-cost">`+tc.want+`<`) {
				t.Errorf("run list lacks %s's cost %q", tc.run.Name, tc.want)
			}
			var apiRun map[string]json.RawMessage
			if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/runs/%d", tc.run.ID)).Body.Bytes(), &apiRun); err != nil {
				t.Fatal(err)
			}
			if got := string(apiRun["cost_usd"]); got != "null" {
				t.Errorf("API run %s: cost_usd %s, want null", tc.run.Name, got)
			}
			export := env.get(fmt.Sprintf("/runs/%d/export.json", tc.run.ID)).Body.String()
			if strings.Contains(export, `"cost_usd": 0`) || strings.Contains(export, `"cost_usd":0`) || !strings.Contains(export, `"cost_usd": null`) && !strings.Contains(export, `"cost_usd":null`) {
				t.Errorf("JSON export of %s: cost_usd not null", tc.run.Name)
			}
		}

		// The experiment page and API.
		body := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID)).Body.String()
		for _, r := range []models.Run{a, b} {
			row := rowOf(body, html.EscapeString(r.Name))
			i := strings.Index(row, `data-testid="cost-per-sample">`)
			if i < 0 {
				t.Errorf("experiment row of %s has no cost per sample:\n%s", r.Name, row)
				continue
			}
			cell := row[i+len(`data-testid="cost-per-sample">`):]
			cell = cell[:strings.Index(cell, "<")]
			if strings.Contains(cell, "$") {
				t.Errorf("experiment row of %s: cost per sample %q, want unknown", r.Name, cell)
			}
		}
		var apiExp struct {
			Runs []struct {
				Run struct {
					Name string `json:"name"`
				} `json:"run"`
				CostPerSample json.RawMessage `json:"cost_per_sample_usd"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/experiments/%d", x.exp.ID)).Body.Bytes(), &apiExp); err != nil {
			t.Fatal(err)
		}
		for _, r := range apiExp.Runs {
			if got := string(r.CostPerSample); got != "null" && got != "" {
				t.Errorf("API experiment, %s: cost_per_sample_usd %s, want null", r.Run.Name, got)
			}
		}

		// The compare page and API.
		cmpPage := env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String()
		for _, side := range []string{"a", "b"} {
			i := strings.Index(cmpPage, `data-testid="compare-cost-`+side+`"`)
			if i < 0 {
				t.Errorf("compare page shows no cost for run %s", side)
				continue
			}
			line := cmpPage[i:min(len(cmpPage), i+600)]
			line = line[:strings.Index(line, "</p>")]
			if !strings.Contains(line, "unknown") || strings.Contains(line, "$") {
				t.Errorf("compare page, run %s: %q; want the cost unknown, no dollar amount", side, line)
			}
		}
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@unpriced.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		raw := api.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a.ID, b.ID), tok)
		if raw.Code != http.StatusOK {
			t.Fatalf("API compare: %d", raw.Code)
		}
		var cmp map[string]json.RawMessage
		if err := json.Unmarshal(raw.Body.Bytes(), &cmp); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"a_cost", "b_cost"} {
			var c map[string]json.RawMessage
			_ = json.Unmarshal(cmp[k], &c)
			for _, f := range []string{"cost_usd", "cost_per_sample_usd"} {
				if v, ok := c[f]; ok && string(v) != "null" {
					t.Errorf("API compare %s.%s = %s, want null", k, f, v)
				}
			}
		}
	})
}
