package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestHedgedRunMatchesPlainRun: a run that re-sends its slow calls
// (Settings.HedgeSlowCalls) against a judge with one slow call (heldAfter:
// in the hedged run held until its copy answered, so that a loaded machine
// whose ordinary answers are slow still re-sends it; it was 1.5 s, the
// first request of each round, which the Hedger's median could reach on
// a loaded machine) ends with the same scores as the same run without the
// setting (the simulated judge answers a request alike whichever copy
// carries it), re-sends some slow calls, and counts each re-send once:
// its calls are the plain run's plus the re-sends, its tokens more, and an
// event on the run says how many calls were re-sent. The run without the
// setting sends exactly one request per call.
func TestHedgedRunMatchesPlainRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const rounds = 8
		run := func(hedge bool) (models.Run, int) {
			hold := 1500 * time.Millisecond
			if hedge {
				hold = 25 * time.Second
			}
			fj := newFakeJudge(t, simjudge.Options{Seed: 4}, heldAfter(hedgeCostLatency, 4*3, hold))
			r := env.startRunner(Config{})
			spec := env.newRun(fj.URL(), rounds, 3, 30)
			spec.Settings.Seed = 77
			// Each run's answers to itself: the second run must call the
			// judge, not find the first one's answers.
			spec.Settings.NoCache = true
			spec.Settings.HedgeSlowCalls = hedge
			got := env.waitFinished(env.launch(r, spec).ID, 2*time.Minute)
			if got.Status != models.RunSucceeded {
				t.Fatalf("run ended %s: %s", got.Status, got.Error)
			}
			return got, fj.Total()
		}
		plain, plainRequests := run(false)
		hedged, hedgedRequests := run(true)

		if plain.Calls != rounds*3 || plainRequests != plain.Calls {
			t.Fatalf("the plain run counted %d calls and sent %d requests, want %d each", plain.Calls, plainRequests, rounds*3)
		}
		resent := hedgedRequests - plainRequests
		t.Logf("plain: %d calls, %d requests; hedged: %d calls, %d requests", plain.Calls, plainRequests, hedged.Calls, hedgedRequests)
		if resent < 1 {
			t.Fatalf("the hedged run sent %d requests, the plain one %d: nothing re-sent", hedgedRequests, plainRequests)
		}
		// At most one re-send per 20 calls sent, plus one.
		if limit := hedgedRequests/20 + 1; resent > limit {
			t.Errorf("%d re-sends, more than the cap of %d", resent, limit)
		}
		if hedged.Calls != plain.Calls+resent {
			t.Errorf("the hedged run counted %d calls, want %d answered + %d re-sent", hedged.Calls, plain.Calls, resent)
		}
		if hedged.PromptTokens <= plain.PromptTokens {
			t.Errorf("the hedged run counted %d prompt tokens, the plain one %d: the re-sends were not counted", hedged.PromptTokens, plain.PromptTokens)
		}

		byKey := func(runID int64) map[string]string {
			out := map[string]string{}
			for _, s := range env.scores(runID) {
				v := "missing"
				if s.Score != nil {
					v = fmt.Sprint(*s.Score)
				}
				out[fmt.Sprintf("%d/%d/%d", s.CriterionIndex, s.Round, s.RowID)] = v
			}
			return out
		}
		want, got := byKey(plain.ID), byKey(hedged.ID)
		if len(want) != len(env.rows)*rounds || len(got) != len(want) {
			t.Fatalf("scores: plain run %d, hedged run %d, want %d each", len(want), len(got), len(env.rows)*rounds)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("score %s: hedged run %s, plain run %s", k, got[k], v)
			}
		}

		evs, err := env.db.RunEvents(context.Background(), hedged.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs {
			if ev.Kind == models.RunEventResent {
				found = true
				if !strings.Contains(ev.Message, fmt.Sprintf("Re-sent %d slow judge call", resent)) {
					t.Errorf("event %q does not say %d calls were re-sent", ev.Message, resent)
				}
			}
		}
		if !found {
			t.Errorf("no %s event on the hedged run (events: %+v)", models.RunEventResent, evs)
		}
		if evs, _ := env.db.RunEvents(context.Background(), plain.ID); len(evs) != 0 {
			t.Errorf("the plain run has events %+v", evs)
		}
	})
}

// TestSpendCapCountsAssumedLoss: a hedged copy cancelled while it was out
// reported no usage, so the cap's settle counted nothing for it; the run
// counts it at the winner's prompt tokens, and so does the cap (assumed),
// without taking it as a call of the mean estimate.
func TestSpendCapCountsAssumedLoss(t *testing.T) {
	in, out, capUSD := 2.0, 4.0, 10.0
	c := spendCapFrom(models.JudgeSnapshot{PriceInputPerMTok: &in, PriceOutputPerMTok: &out}, models.RunSpend{CapUSD: &capUSD})
	c.assumed(500_000, 0)
	if c.spent != 1.0 || c.calls != 0 {
		t.Errorf("after a lost copy of 500k prompt tokens at $2/M: spent %v over %d calls, want $1 over 0", c.spent, c.calls)
	}
}
