package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestPartlyCachedRunShowsWhatItPaid: a run whose calls the answer cache
// answered in part shows the money it paid and for how many of its calls,
// on its page, in the run list, in the experiment table and in the API; it
// is never marked cheapest against runs that paid for every call. A run
// answered wholly from the cache shows "cached", never $0.
func TestPartlyCachedRunShowsWhatItPaid(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Priced", 20)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Priced judges"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		priced := func(calls, cached, tokens int, cost float64) func(*models.Run) {
			return func(r *models.Run) {
				r.ExperimentID, r.Simulated = &e.ID, false
				r.Calls, r.CachedCalls, r.PromptTokens, r.CompletionTokens, r.CostUSD = calls, cached, tokens*9/10, tokens/10, &cost
			}
		}
		full := env.storedRun(d, "Paid in full", noisy(d.human, 0.5, 1), priced(10, 0, 10000, 0.05))
		dearer := env.storedRun(d, "Paid more", noisy(d.human, 0.6, 2), priced(10, 0, 16000, 0.08))
		partly := env.storedRun(d, "Partly cached", noisy(d.human, 0.4, 3), priced(10, 7, 3000, 0.015))
		wholly := env.storedRun(d, "Wholly cached", noisy(d.human, 0.7, 4), priced(10, 10, 0, 0))
		for _, r := range []models.Run{full, dearer, partly, wholly} {
			if r.Simulated || r.CostUSD == nil || r.Calls != 10 {
				t.Fatalf("fixture %s: simulated %v, cost %v, %d calls; want a priced run of 10 calls", r.Name, r.Simulated, r.CostUSD, r.Calls)
			}
		}

		// The run page and the run list.
		runCost := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`)
		for _, tc := range []struct {
			run  models.Run
			want string
		}{
			{partly, "$0.015 paid; 7 of 10 calls answered from the answer cache"},
			{wholly, "cached (all 10 calls answered from the answer cache)"},
			{full, "$0.05"},
		} {
			m := runCost.FindStringSubmatch(env.get(fmt.Sprintf("/runs/%d", tc.run.ID)).Body.String())
			if m == nil || m[1] != tc.want {
				t.Errorf("run page of %s: cost %v, want %q", tc.run.Name, m, tc.want)
			}
		}
		list := env.get("/runs").Body.String()
		for _, w := range []string{
			`data-testid="run-list-cost">$0.015 paid; 7 of 10 calls answered from the answer cache<`,
			`data-testid="run-list-cost">cached (all 10 calls answered from the answer cache)<`,
		} {
			if !strings.Contains(list, w) {
				t.Errorf("run list lacks %q", w)
			}
		}

		// The experiment table: what it paid per sample, with the share of
		// its calls; never marked best; the cheapest full run is.
		body := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		perSample := func(cost float64) string { return dollars(cost / float64(len(d.human))) }
		row := rowOf(body, partly.Name)
		for _, w := range []string{
			`data-testid="cost-per-sample">` + perSample(0.015),
			`data-testid="tokens-per-sample">150`,
			`data-testid="cost-per-sample-note">paid calls only: 7 of 10 calls answered from the answer cache<`,
		} {
			if !strings.Contains(row, w) {
				t.Errorf("partly cached run's row lacks %q: %s", w, row)
			}
		}
		bestCell := regexp.MustCompile(`best"[^>]*data-testid="(tokens|cost)-per-sample"`)
		if bestCell.MatchString(row) {
			t.Errorf("partly cached run's tokens or cost marked best against runs that paid for every call: %s", row)
		}
		if fullRow := rowOf(body, full.Name); !regexp.MustCompile(`best"[^>]*data-testid="cost-per-sample">` + regexp.QuoteMeta(perSample(0.05))).MatchString(fullRow) {
			t.Errorf("the cheapest run that paid for every call is not marked best: %s", fullRow)
		}
		if row := rowOf(body, wholly.Name); !strings.Contains(row, `data-testid="cost-per-sample">cached<`) || bestCell.MatchString(row) {
			t.Errorf("wholly cached run's row: want cost \"cached\", not best: %s", row)
		}
		if !strings.Contains(body, "A run answered partly from the answer cache shows what it paid") {
			t.Errorf("no note explaining a partly cached run's figures")
		}
		if strings.Contains(body, fmt.Sprintf(`<a href="/runs/%d" data-testid="scatter-point"`, partly.ID)) {
			t.Errorf("chart plots the partly cached run at what it paid")
		}

		// The API: the paid figures, flagged.
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		rec := newAPIClient(t, env).get(fmt.Sprintf("/api/v1/experiments/%d", e.ID), token)
		var got APIExperiment
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
			t.Fatalf("GET experiment: %d %s", rec.Code, rec.Body)
		}
		byName := map[string]APIExperimentRun{}
		for _, r := range got.Runs {
			byName[r.Run.Name] = r
		}
		p := byName[partly.Name]
		if !p.PartlyCached || p.CostPerSample == nil || p.TokensPerSample == nil || *p.TokensPerSample != 150 {
			t.Errorf("API partly cached run: partly_cached %v, cost %v, tokens %v; want flagged with what it paid", p.PartlyCached, p.CostPerSample, p.TokensPerSample)
		} else if got, want := float64(*p.CostPerSample), 0.015/20; got < want*0.999 || got > want*1.001 {
			t.Errorf("API partly cached run: cost per sample %g, want %g", got, want)
		}
		if f := byName[full.Name]; f.PartlyCached || f.CostPerSample == nil {
			t.Errorf("API full run: partly_cached %v, cost %v", f.PartlyCached, f.CostPerSample)
		}
		if w := byName[wholly.Name]; w.PartlyCached || w.CostPerSample != nil || w.TokensPerSample != nil {
			t.Errorf("API wholly cached run: partly_cached %v, cost %v, tokens %v; want unflagged with no figures", w.PartlyCached, w.CostPerSample, w.TokensPerSample)
		}
	})
}

// TestCachedCallsCountedAsFirstPaid: a run that kept what its cached
// answers cost when first paid for says on its page what it would have
// cost without the cache, and the experiment compares it on that figure:
// its method's cost, which can be the cheapest (before, such a run was
// only ever shown at what it paid and left out of every comparison).
func TestCachedCallsCountedAsFirstPaid(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Priced", 20)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Priced judges"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		in, out := 1.0, 2.0 // dollars per million tokens
		priced := func(cached, prompt, completion, cachedPrompt, cachedCompletion int) func(*models.Run) {
			return func(r *models.Run) {
				r.ExperimentID, r.Simulated = &e.ID, false
				r.JudgeSnapshot.Simulated, r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = false, &in, &out
				cost := (float64(prompt)*in + float64(completion)*out) / 1e6
				r.Calls, r.CachedCalls, r.PromptTokens, r.CompletionTokens, r.CostUSD = 10, cached, prompt, completion, &cost
				r.CachedPromptTokens, r.CachedCompletionTokens = cachedPrompt, cachedCompletion
			}
		}
		// Without the cache the partly cached run costs $0.011 (10,000
		// tokens), less than the run that paid $0.02 for every call.
		dearer := env.storedRun(d, "Paid more", noisy(d.human, 0.6, 2), priced(0, 18000, 1000, 0, 0))
		partly := env.storedRun(d, "Partly cached", noisy(d.human, 0.4, 3), priced(7, 2700, 300, 6300, 700))
		wholly := env.storedRun(d, "Wholly cached", noisy(d.human, 0.7, 4), priced(10, 0, 0, 9000, 1000))

		runCost := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`)
		for _, tc := range []struct {
			run  models.Run
			want string
		}{
			{partly, "$0.0033 paid; 7 of 10 calls answered from the answer cache; $0.011 without the cache"},
			{wholly, "cached (all 10 calls answered from the answer cache; $0.011 as if paid, at the prices of this run)"},
			{dearer, "$0.02"},
		} {
			m := runCost.FindStringSubmatch(env.get(fmt.Sprintf("/runs/%d", tc.run.ID)).Body.String())
			if m == nil || m[1] != tc.want {
				t.Errorf("run page of %s: cost %v, want %q", tc.run.Name, m, tc.want)
			}
		}

		body := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		perSample := dollars(0.011 / float64(len(d.human)))
		for _, r := range []models.Run{partly, wholly} {
			row := rowOf(body, r.Name)
			for _, w := range []string{`data-testid="tokens-per-sample">500<`, `data-testid="cost-per-sample">` + perSample, "as if every call were paid"} {
				if !strings.Contains(row, w) {
					t.Errorf("%s: row lacks %q: %s", r.Name, w, row)
				}
			}
			if !regexp.MustCompile(`best"[^>]*data-testid="cost-per-sample"`).MatchString(row) {
				t.Errorf("%s: the cheapest method cost is not marked best: %s", r.Name, row)
			}
			if !strings.Contains(body, fmt.Sprintf(`<a href="/runs/%d" data-testid="scatter-point"`, r.ID)) {
				t.Errorf("%s: left out of the chart", r.Name)
			}
		}
		if row := rowOf(body, dearer.Name); regexp.MustCompile(`best"[^>]*data-testid="cost-per-sample"`).MatchString(row) {
			t.Errorf("the dearer run is marked cheapest: %s", row)
		}
	})
}

// TestExportedCostsAreRounded: a stored cost carrying float noise (two
// calls' costs summed) is written rounded in the run's JSON export and the
// API's run and experiment objects, the same bytes on every export.
func TestExportedCostsAreRounded(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Noisy cost", 3)
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: "Noise"}
		if err := env.db.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		parts := []float64{0.1, 0.2}
		cost := parts[0] + parts[1] // at run time: 0.30000000000000004
		run := env.storedRun(d, "Priced", d.human, func(r *models.Run) {
			r.ExperimentID, r.Simulated, r.Calls, r.PromptTokens, r.CostUSD = &e.ID, false, 2, 300, &cost
		})
		if run.CostUSD == nil || *run.CostUSD == 0.3 {
			t.Fatalf("fixture: stored cost %v, want 0.30000000000000004", run.CostUSD)
		}
		check := func(path, want string, get func(string) *httptest.ResponseRecorder) {
			t.Helper()
			first, second := get(path), get(path)
			if first.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %.300s", path, first.Code, first.Body)
			}
			body := first.Body.String()
			if !strings.Contains(body, want) || strings.Contains(body, "0.30000000000000004") || strings.Contains(body, "0.10000000000000002") {
				t.Errorf("GET %s: want %s without float noise: %.400s", path, want, body[max(0, strings.Index(body, "cost")-20):])
			}
			if body != second.Body.String() {
				t.Errorf("GET %s: two exports differ", path)
			}
		}
		// The page's download link (before any account exists, so the
		// test's browser needs no sign-in).
		check(fmt.Sprintf("/runs/%d/export.json", run.ID), `"cost_usd": 0.3,`, env.get)

		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		viaAPI := func(path string) *httptest.ResponseRecorder { return api.get(path, token) }
		check(fmt.Sprintf("/api/v1/runs/%d/export.json", run.ID), `"cost_usd": 0.3,`, viaAPI)
		check(fmt.Sprintf("/api/v1/runs/%d", run.ID), `"cost_usd":0.3,`, viaAPI)
		// 0.30000000000000004 / 3 samples = 0.10000000000000002
		check(fmt.Sprintf("/api/v1/experiments/%d", e.ID), `"cost_per_sample_usd":0.1,`, viaAPI)
	})
}
