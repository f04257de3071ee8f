package main

import (
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRunCostLineReadsAsTheRunPage: the summary line's cost reads as the
// run page's does (handlers' runCostText): a run answered wholly from the
// answer cache is "cached", never "$0" (regression: it printed "cost $0
// paid; 6 of 6 calls ..."), and a run without prices is "unknown", with no
// "paid" after it when the cache answered some of its calls (regression:
// "cost unknown (...) paid; ...").
func TestRunCostLineReadsAsTheRunPage(t *testing.T) {
	in, out := 1.0, 2.0
	priced := models.JudgeSnapshot{Model: "m", PriceInputPerMTok: &in, PriceOutputPerMTok: &out}
	unpriced := models.JudgeSnapshot{Model: "m"}
	cost := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		run  models.Run
		want string
	}{
		{"simulated", models.Run{Simulated: true, Calls: 6}, "cost $0 (simulated judge)"},
		{"paid in full", models.Run{JudgeSnapshot: priced, Calls: 6, CostUSD: cost(0.0123456)}, "cost $0.012346"},
		{"partly cached", models.Run{JudgeSnapshot: priced, Calls: 6, CachedCalls: 2, CostUSD: cost(0.01)},
			"cost $0.01 paid; 2 of 6 calls answered from the answer cache at no cost"},
		{"wholly cached", models.Run{JudgeSnapshot: priced, Calls: 6, CachedCalls: 6, CostUSD: cost(0)},
			"cost: cached (all 6 calls answered from the answer cache at no cost)"},
		{"wholly cached, no prices", models.Run{JudgeSnapshot: unpriced, Calls: 6, CachedCalls: 6},
			"cost: cached (all 6 calls answered from the answer cache at no cost)"},
		{"no prices", models.Run{JudgeSnapshot: unpriced, Calls: 6},
			"cost unknown (no prices for model m; give them with --prices)"},
		{"no prices, partly cached", models.Run{JudgeSnapshot: unpriced, Calls: 6, CachedCalls: 2},
			"cost unknown (no prices for model m; give them with --prices); 2 of 6 calls answered from the answer cache at no cost"},
		{"priced, nothing paid yet", models.Run{JudgeSnapshot: priced}, "cost $0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runCostLine(tc.run); got != tc.want {
				t.Errorf("runCostLine = %q, want %q", got, tc.want)
			}
		})
	}
}
