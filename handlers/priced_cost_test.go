package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// Usage the priced endpoint reports: a batch call, and its repair call.
const (
	batchPromptTokens, batchCompletionTokens   = 1234, 56
	repairPromptTokens, repairCompletionTokens = 321, 7
)

// pricedBatchEndpoint is a BatchEval judge that bills known usage: every
// batch answer leaves its last sample's score out, so every batch sends a
// repair request; its first request of all fails with a 500 (retried by
// the client, not billed: a 500 reports no usage).
func pricedBatchEndpoint(t *testing.T) (url string, requests func() int) {
	var mu sync.Mutex
	n := 0
	label := regexp.MustCompile(`(?m)^Sample(\d+):`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			http.Error(w, `{"error":{"message":"try again"}}`, http.StatusInternalServerError)
			return
		}
		b := len(label.FindAllString(req.Messages[1].Content, -1))
		scores := func(upto int) string {
			var s []string
			for k := 1; k <= upto; k++ {
				s = append(s, fmt.Sprintf("Sample%d:%d", k, 1+k%3))
			}
			return "Float Scores: [" + strings.Join(s, ", ") + "]"
		}
		text, prompt, completion := "Analysis: fine.\n"+scores(b-1), batchPromptTokens, batchCompletionTokens
		if len(req.Messages) > 2 {
			text, prompt, completion = scores(b), repairPromptTokens, repairCompletionTokens
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "priced-judge",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestPricedRunCostAgreesEverywhere runs BatchEval against an endpoint that
// reports known usage, on a judge with prices, and checks the cost against
// tokens × prices on the run page, the run list, the experiment page and
// API, the JSON export and the API's run: repair calls are billed, the
// retried 500 is not. A second, identical run is answered from the answer
// cache: it paid nothing and shows what the calls cost as if paid. After
// the judge's prices change, both runs keep the prices they ran at.
//
// Rounding: the stored cost is a sum of per-call costs; exports write it to
// 6 decimals (report.USD), the experiment's cost per sample to 9, and pages
// with three significant digits below a dollar (web.Money).
func TestPricedRunCostAgreesEverywhere(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		url, requests := pricedBatchEndpoint(t)
		in, out := 2.5, 10.0
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Priced judge", BaseURL: url, Model: "priced-judge", MaxConcurrency: 2, TimeoutSeconds: 10,
			PriceInputPerMTok: &in, PriceOutputPerMTok: &out}
		if err := env.db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID, Name: "Priced"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		launch := func(name string) models.Run {
			run := env.startRun(d.dataset, name, models.MethodBatchEval, func(r *models.Run) {
				r.JudgeID, r.JudgeSnapshot, r.Simulated, r.ExperimentID = &j.ID, j.Snapshot(), false, &e.ID
			})
			run = env.waitRun(run.ID, 90*time.Second)
			if run.Status != models.RunSucceeded {
				t.Fatalf("%s: %s (%s)", name, run.Status, run.Error)
			}
			return run
		}
		paid := launch("Paid")
		// 2 criteria × 2 rounds × 3 batches of 10, each with its repair.
		const batches = 12
		if paid.Calls != 2*batches || paid.CachedCalls != 0 {
			t.Fatalf("paid run: %d calls (%d cached), want %d, none cached", paid.Calls, paid.CachedCalls, 2*batches)
		}
		if got := requests(); got != 2*batches+1 {
			t.Errorf("the endpoint got %d requests, want %d (every call, and the 500 retried once)", got, 2*batches+1)
		}
		wantPrompt := batches * (batchPromptTokens + repairPromptTokens)
		wantCompletion := batches * (batchCompletionTokens + repairCompletionTokens)
		if paid.PromptTokens != wantPrompt || paid.CompletionTokens != wantCompletion {
			t.Errorf("paid run: %d + %d tokens, want %d + %d", paid.PromptTokens, paid.CompletionTokens, wantPrompt, wantCompletion)
		}
		wantCost := (float64(wantPrompt)*in + float64(wantCompletion)*out) / 1e6
		if paid.CostUSD == nil || math.Abs(*paid.CostUSD-wantCost) > 1e-12 {
			t.Fatalf("paid run: cost %v, want %.9f", paid.CostUSD, wantCost)
		}

		cached := launch("Cached")
		if cached.CachedCalls != cached.Calls || cached.Calls != 2*batches || cached.PromptTokens != 0 {
			t.Fatalf("cached run: %d of %d calls cached, %d prompt tokens; want every call cached, none paid", cached.CachedCalls, cached.Calls, cached.PromptTokens)
		}
		if got := requests(); got != 2*batches+1 {
			t.Errorf("the cached run sent %d requests to the endpoint, want none", got-(2*batches+1))
		}

		// The judge's prices change after the runs: each run keeps the
		// prices it ran at.
		in2, out2 := 5.0, 15.0
		j.PriceInputPerMTok, j.PriceOutputPerMTok = &in2, &out2
		if err := env.db.SaveJudge(ctx, &j); err != nil {
			t.Fatal(err)
		}

		// A run answered from the cache after the change: its calls were
		// paid for at the old prices, so the full cost it shows, worked
		// out at its own (new) prices, must not claim to be what they cost
		// when first paid for.
		later := launch("Cached after the price change")
		laterCost := (float64(wantPrompt)*in2 + float64(wantCompletion)*out2) / 1e6
		if later.CachedCalls != later.Calls || later.CostUSD == nil || *later.CostUSD != 0 {
			t.Fatalf("later run: %d of %d calls cached, cost %v; want all cached, $0 paid", later.CachedCalls, later.Calls, later.CostUSD)
		}

		money := web.Money(wantCost)
		runCost := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`)
		for _, tc := range []struct {
			run  models.Run
			want string
		}{
			{paid, money},
			{cached, fmt.Sprintf("cached (all %d calls answered from the answer cache; %s as if paid, at the prices of this run)", 2*batches, money)},
			{later, fmt.Sprintf("cached (all %d calls answered from the answer cache; %s as if paid, at the prices of this run)", 2*batches, web.Money(laterCost))},
		} {
			if m := runCost.FindStringSubmatch(env.get(fmt.Sprintf("/runs/%d", tc.run.ID)).Body.String()); m == nil || m[1] != tc.want {
				t.Errorf("run page of %s: cost %v, want %q", tc.run.Name, m, tc.want)
			}
			list := env.get("/runs").Body.String()
			if !strings.Contains(list, `data-testid="run-list-cost">`+tc.want+`<`) {
				t.Errorf("run list lacks %s's cost %q", tc.run.Name, tc.want)
			}
		}

		// Exports and the API: the rounded amount; null for the wholly
		// cached run's paid cost.
		exact := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", wantCost), "0"), ".")
		for _, tc := range []struct {
			run  models.Run
			want string
		}{{paid, exact}, {cached, "0"}, {later, "0"}} {
			var apiRun struct {
				CostUSD *json.Number `json:"cost_usd"`
			}
			if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/runs/%d", tc.run.ID)).Body.Bytes(), &apiRun); err != nil {
				t.Fatal(err)
			}
			if apiRun.CostUSD == nil || string(*apiRun.CostUSD) != tc.want {
				t.Errorf("API run %s: cost_usd %v, want %s", tc.run.Name, apiRun.CostUSD, tc.want)
			}
			var export struct {
				Report struct {
					Run struct {
						CostUSD *json.Number `json:"cost_usd"`
					} `json:"run"`
				} `json:"report"`
				Envelope map[string]any `json:"envelope"`
			}
			body := env.get(fmt.Sprintf("/runs/%d/export.json", tc.run.ID)).Body.Bytes()
			if err := json.Unmarshal(body, &export); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body), `"cost_usd": `+tc.want+",") && !strings.Contains(string(body), `"cost_usd":`+tc.want+",") {
				t.Errorf("JSON export of %s lacks cost_usd %s", tc.run.Name, tc.want)
			}
		}

		// The experiment: cost per sample; the cached run's as if paid, at
		// the price it ran at.
		rows := float64(d.dataset.RowCount)
		body := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		for _, r := range []models.Run{paid, cached} {
			if row := rowOf(body, r.Name); !strings.Contains(row, `data-testid="cost-per-sample">`+dollars(wantCost/rows)) {
				t.Errorf("experiment row of %s lacks cost per sample %s:\n%s", r.Name, dollars(wantCost/rows), row)
			}
		}
		var apiExp struct {
			Runs []struct {
				Run struct {
					Name string `json:"name"`
				} `json:"run"`
				CostPerSample *json.Number `json:"cost_per_sample_usd"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/experiments/%d", e.ID)).Body.Bytes(), &apiExp); err != nil {
			t.Fatal(err)
		}
		perSample, _ := report.USDPerSample(wantCost / rows).MarshalJSON()
		for _, r := range apiExp.Runs {
			if r.Run.Name == later.Name {
				continue
			}
			if r.CostPerSample == nil || string(*r.CostPerSample) != string(perSample) {
				t.Errorf("API experiment, %s: cost_per_sample_usd %v, want %s", r.Run.Name, r.CostPerSample, perSample)
			}
		}
		if len(apiExp.Runs) != 3 {
			t.Errorf("API experiment has %d runs, want 3", len(apiExp.Runs))
		}
		if row := rowOf(body, later.Name); !strings.Contains(row, `data-testid="cost-per-sample">`+dollars(laterCost/rows)) || strings.Contains(row, "cost when first paid for") {
			t.Errorf("experiment row of %s: want cost per sample %s at its own prices, not said to be what the calls cost when first paid for:\n%s", later.Name, dollars(laterCost/rows), row)
		}
		if strings.Contains(body, "cost when first paid for") {
			t.Errorf("experiment page says the cached calls are counted at what they cost when first paid for; they are priced at each run's own prices")
		}
	})
}
