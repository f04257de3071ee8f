package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestSpendCapCountsProbes: the breaker's probes are money spent, so the
// spending cap counts them: those stored by earlier executions when the
// account is read, this execution's as they are sent, and a probe itself
// goes only when the cap leaves room for it after the calls waiting for
// the judge. They used to be outside the cap, so a run probing through a
// long outage could spend past it. Probes are not calls: they leave a
// call's estimate (the mean cost of the calls) alone. At $1 per million
// tokens, the run below has spent $6 over 3 calls ($2 each) of its $10.
func TestSpendCapCountsProbes(t *testing.T) {
	t.Parallel()
	one, capUSD, six := 1.0, 10.0, 6.0
	prices := models.JudgeSnapshot{PriceInputPerMTok: &one, PriceOutputPerMTok: &one}
	for _, tc := range []struct {
		name                  string
		storedProbeTokens     int // earlier executions' probes
		probeTokens           int // a probe of this execution
		admitted              int // calls let through (waiting for the judge) before the probe
		wantCall, wantProbeOK bool
	}{
		{name: "no probes", wantCall: true, wantProbeOK: true},
		{name: "cheap probes stored", storedProbeTokens: 1_000_000, wantCall: true, wantProbeOK: true},
		{name: "stored probes leave no room for a call", storedProbeTokens: 2_500_000, wantCall: false, wantProbeOK: false},
		{name: "this execution's probes leave no room for a call", probeTokens: 2_500_000, wantCall: false, wantProbeOK: false},
		// Two calls wait for the judge ($6 + 2 x $2): a probe, estimated
		// at a call's $2 before any probe cost anything, would pass $10.
		{name: "calls waiting fill the cap", admitted: 2, wantCall: false, wantProbeOK: false},
		{name: "one call waiting", admitted: 1, wantCall: true, wantProbeOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := spendCapFrom(prices, models.RunSpend{CapUSD: &capUSD, CostUSD: &six, Calls: 3, ProbePromptTokens: tc.storedProbeTokens})
			if tc.probeTokens > 0 {
				c.probed(tc.probeTokens, 0)
			}
			for range tc.admitted {
				if err := c.admit(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
			if next := c.spent / float64(c.calls); next != 2 {
				t.Errorf("a call is estimated at $%g, want $2: probes are not calls", next)
			}
			var capErr *SpendCapError
			if err := c.admitProbe(); (err == nil) != tc.wantProbeOK || (err != nil && !errors.As(err, &capErr)) {
				t.Errorf("probe: %v, want allowed %v", err, tc.wantProbeOK)
			}
			if tc.admitted > 0 {
				return // the next call waits for those let through
			}
			err := c.admit(context.Background(), nil)
			if (err == nil) != tc.wantCall {
				t.Errorf("call: %v, want allowed %v", err, tc.wantCall)
			}
			if err != nil && (!errors.As(err, &capErr) || capErr.SpentUSD <= 6) {
				t.Errorf("refusal %v does not count the probes in what was spent", err)
			}
		})
	}
}

// TestOutageProbesStayWithinTheSpendCap: a capped run whose judge is down,
// and whose probes are answered and billed (a proxy answering 200 with
// usage and no choices, read as "the judge answers again" while its calls
// still fail), stops with "spending cap reached" when the next probe would
// pass the cap, having spent (calls and probes together) no more than it.
// Probes used to be outside the cap: the run probed on, past it.
func TestOutageProbesStayWithinTheSpendCap(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var probes atomic.Int64
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Total == 1 {
				return false // the first call is answered: a call's cost is known
			}
			if c.Probe {
				// $1 at the test's $1 per million prompt tokens.
				probes.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"fake-judge","choices":[],"usage":{"prompt_tokens":1000000,"completion_tokens":0,"total_tokens":1000000}}`)
				return true
			}
			writeAPIError(w, http.StatusServiceUnavailable, nil, "upstream down")
			return true
		})
		r := env.startRunner(Config{LeaseTTL: leaseTTL, Breaker: BreakerConfig{Threshold: 3, ProbeInterval: 20 * time.Millisecond},
			JudgeTuning: JudgeTuning{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}})
		capUSD := 2.5
		spec := env.newRun(fj.URL(), 1, 1, 30) // 3 batches, one call at a time
		spec.Settings.SpendCapUSD = &capUSD
		run := env.waitFinished(env.launch(r, spec).ID, 30*time.Second)
		var probeCost float64
		if c := run.ProbeCostUSD(); c != nil {
			probeCost = *c
		}
		spent := *run.CostUSD + probeCost
		if run.Status != models.RunFailed || !strings.Contains(run.Error, "spending cap reached") {
			t.Errorf("run %s (error %q) after %d probes, want failed by its spending cap", run.Status, run.Error, probes.Load())
		}
		if spent > capUSD || run.ProbeCalls == 0 {
			t.Errorf("the run spent $%.4f of its $%g cap, %d probe calls ($%.4f), want within the cap with some probes",
				spent, capUSD, run.ProbeCalls, probeCost)
		}
	})
}

// TestNoCallPastTheCapAfterProbes: when the probes of a judge that was
// down have brought the run's spending to its cap before any call has
// answered, the first call after the judge is back is refused (it used to
// go alone, unestimated, past the cap), and a call waiting for the judge
// is reckoned at least a probe's cost, so that the probes leave room for
// it (they used to take the whole cap). The stop says what the probes
// cost. At $1 per million tokens, a probe of 900,000 tokens costs $0.90.
func TestNoCallPastTheCapAfterProbes(t *testing.T) {
	t.Parallel()
	one, capUSD := 1.0, 2.0
	prices := models.JudgeSnapshot{PriceInputPerMTok: &one, PriceOutputPerMTok: &one}

	c := spendCapFrom(prices, models.RunSpend{CapUSD: &capUSD})
	c.probed(900_000, 0)
	c.probed(900_000, 0) // $1.80 of the $2 spent on probes, no call answered
	err := c.admit(context.Background(), nil)
	var capErr *SpendCapError
	if !errors.As(err, &capErr) {
		t.Fatalf("the first call after $1.80 of probes under a $2 cap: %v, want refused at the cap", err)
	}
	if msg := capErr.Error(); !strings.Contains(msg, "spending cap reached") || !strings.Contains(msg, "of which $1.8000 was spent on checks whether the judge was back") {
		t.Errorf("the stop says %q; want it to say what the probes cost", msg)
	}

	// One call let through before the judge went down waits for it; a
	// $0.90 probe was sent. A second probe would leave $0.20 for it.
	c = spendCapFrom(prices, models.RunSpend{CapUSD: &capUSD})
	if err := c.admit(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.probed(900_000, 0)
	if err := c.admitProbe(); !errors.As(err, &capErr) {
		t.Errorf("a probe leaving $0.20 for the call waiting for the judge: %v, want refused at the cap", err)
	}

	// Without probes the first call still goes alone, as in a new run.
	c = spendCapFrom(prices, models.RunSpend{CapUSD: &capUSD})
	if err := c.admit(context.Background(), nil); err != nil {
		t.Errorf("the first call of a run without probes: %v, want it sent", err)
	}
}
