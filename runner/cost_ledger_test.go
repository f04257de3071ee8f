package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// ledger is the fake judge's own book of what it was sent and what it
// billed: every request it received (probes apart), the ones it refused
// with an error (no usage: not billed), and the usage of every answer it
// wrote in full. A run's counters are checked against it.
type ledger struct {
	mu                 sync.Mutex
	requests, errors   int
	prompt, completion int
	// abandoned counts the requests held until the client went away
	// (killed with its process): never answered, so never billed.
	abandoned int
	// cancelled counts held requests the client gave up on while it
	// ran (a re-sent copy answered first): billed their prompt only.
	cancelled int
	// hold is how long a "hold" request is held at most; latency delays
	// every other answer.
	hold, latency time.Duration
}

type ledgerTotals struct{ requests, errors, prompt, completion, abandoned, cancelled int }

func (l *ledger) totals() ledgerTotals {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ledgerTotals{l.requests, l.errors, l.prompt, l.completion, l.abandoned, l.cancelled}
}

func (a ledgerTotals) minus(b ledgerTotals) ledgerTotals {
	return ledgerTotals{a.requests - b.requests, a.errors - b.errors, a.prompt - b.prompt, a.completion - b.completion,
		a.abandoned - b.abandoned, a.cancelled - b.cancelled}
}

// ledgerAnswer says how the fake answers one call: "" the simulated
// judge's answer, "429" or "500" an error without usage, "unreadable" a
// billed answer with no score in it, "hang" a request held until its
// client goes away (never answered), "hold" one held until its client
// gives up on it (billed its prompt) or for ledger.hold (answered).
type ledgerAnswer func(c judgeCall) string

// newLedgerJudge is a fake judge keeping a ledger.
func newLedgerJudge(t *testing.T, seed int64, answer ledgerAnswer) (*fakeJudge, *ledger) {
	l := &ledger{}
	var inner http.Handler
	var fj *fakeJudge
	fj = newFakeJudge(t, simjudge.Options{Seed: seed}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
		if c.Probe {
			return false
		}
		how := ""
		if answer != nil {
			how = answer(c)
		}
		l.mu.Lock()
		l.requests++
		l.mu.Unlock()
		switch how {
		case "429":
			l.mu.Lock()
			l.errors++
			l.mu.Unlock()
			writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "0"}, "slow down")
			return true
		case "500":
			l.mu.Lock()
			l.errors++
			l.mu.Unlock()
			writeAPIError(w, http.StatusInternalServerError, nil, "try again")
			return true
		case "hang":
			fj.hang(r)
			l.mu.Lock()
			l.abandoned++
			l.mu.Unlock()
			return true
		case "hold":
			l.mu.Lock()
			hold := l.hold
			l.mu.Unlock()
			select {
			case <-time.After(hold):
			case <-r.Context().Done():
				rec := httptest.NewRecorder()
				inner.ServeHTTP(rec, r.WithContext(context.Background()))
				var body struct {
					Usage struct {
						PromptTokens int `json:"prompt_tokens"`
					} `json:"usage"`
				}
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				l.mu.Lock()
				l.cancelled++
				l.prompt += body.Usage.PromptTokens
				l.mu.Unlock()
				return true
			}
		case "unreadable":
			l.mu.Lock()
			l.prompt, l.completion = l.prompt+100, l.completion+20
			l.mu.Unlock()
			writeCompletion(w, "I cannot rate these.")
			return true
		}
		l.mu.Lock()
		latency := l.latency
		l.mu.Unlock()
		gaveUp := false
		if latency > 0 {
			select {
			case <-time.After(latency):
			case <-r.Context().Done():
				// A copy cancelled while it was answered: billed its
				// prompt, as a held one is.
				gaveUp = true
			}
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r.WithContext(context.Background()))
		var body struct {
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if rec.Code == http.StatusOK {
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Errorf("simulated answer: %v", err)
			}
		}
		l.mu.Lock()
		if gaveUp {
			l.cancelled++
			l.prompt += body.Usage.PromptTokens
			l.mu.Unlock()
			return true
		}
		l.prompt, l.completion = l.prompt+body.Usage.PromptTokens, l.completion+body.Usage.CompletionTokens
		if rec.Code != http.StatusOK {
			l.errors++
		}
		l.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return true
	})
	inner = fj.inner
	return fj, l
}

// wantLedger checks a run's counters against what the judge saw while it
// ran: each request that reached it is a paid call or a retry, its usage
// is the run's tokens, and its cost those tokens at the run's prices (or
// unknown without prices).
func wantLedger(t *testing.T, name string, run models.Run, got ledgerTotals) {
	t.Helper()
	if sent := got.requests - got.abandoned; run.PaidCalls()+run.Retries != sent {
		t.Errorf("%s: %d calls (%d cached) and %d retries, so %d requests; the judge received %d (%d refused, %d re-sent copies cancelled), and %d more it never answered",
			name, run.Calls, run.CachedCalls, run.Retries, run.PaidCalls()+run.Retries, sent, got.errors, got.cancelled, got.abandoned)
	}
	if run.PromptTokens != got.prompt || run.CompletionTokens != got.completion {
		t.Errorf("%s: %d+%d tokens; the judge billed %d+%d", name, run.PromptTokens, run.CompletionTokens, got.prompt, got.completion)
	}
	want := run.JudgeSnapshot.Cost(got.prompt, got.completion)
	switch {
	case want == nil && run.CostUSD != nil:
		t.Errorf("%s: cost $%g with no prices; want unknown", name, *run.CostUSD)
	case want != nil && (run.CostUSD == nil || math.Abs(*run.CostUSD-*want) > 1e-12*math.Max(1, *want)):
		t.Errorf("%s: cost %v, want %g", name, orNilCost(run.CostUSD), *want)
	}
}

// TestCostFiguresMatchTheJudgesLedger: in each way a run can meet its
// judge, the run's calls, cached calls, retries, tokens and cost equal
// what the fake judge received and billed (counted on its side).
func TestCostFiguresMatchTheJudgesLedger(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Every batch's first request: a 429 for one batch, a 500 for
		// another, an unreadable (billed) answer for a third.
		var mu sync.Mutex
		firsts := map[string]string{}
		mode := ""
		fj, l := newLedgerJudge(t, 3, func(c judgeCall) string {
			mu.Lock()
			defer mu.Unlock()
			if mode != "faults" || c.Repair || c.N != 1 {
				return ""
			}
			if _, ok := firsts[c.Key]; !ok {
				kinds := []string{"429", "500", "unreadable"}
				if len(firsts) < len(kinds) {
					firsts[c.Key] = kinds[len(firsts)]
				} else {
					firsts[c.Key] = ""
				}
			}
			return firsts[c.Key]
		})
		r := env.startRunner(Config{})
		run := func(name string, edit func(*models.Run)) models.Run {
			t.Helper()
			spec := env.newRun(fj.URL(), 2, 2, 30)
			spec.Name = name
			spec.Settings.Seed = 21
			if edit != nil {
				edit(&spec)
			}
			before := l.totals()
			got := env.waitFinished(env.launch(r, spec).ID, 60*time.Second)
			if got.Status != models.RunSucceeded {
				t.Fatalf("%s: %s (%s)", name, got.Status, got.Error)
			}
			wantLedger(t, name, got, l.totals().minus(before))
			return got
		}

		plain := run("plain", nil)
		if plain.CachedCalls != 0 || plain.Calls != 6 || plain.Retries != 0 {
			t.Errorf("plain: %d calls, %d cached, %d retries; want 6 paid, none cached or retried", plain.Calls, plain.CachedCalls, plain.Retries)
		}
		again := run("re-launched", nil)
		if again.Calls != plain.Calls || again.CachedCalls != plain.Calls || again.CostUSD == nil || *again.CostUSD != 0 ||
			again.CachedPromptTokens != plain.PromptTokens || again.CachedCompletionTokens != plain.CompletionTokens {
			t.Errorf("re-launched: %d calls (%d cached), cost %v, cached tokens %d+%d; want %d all cached, $0, as paid %d+%d",
				again.Calls, again.CachedCalls, orNilCost(again.CostUSD), again.CachedPromptTokens, again.CachedCompletionTokens,
				plain.Calls, plain.PromptTokens, plain.CompletionTokens)
		}
		noCache := run("cache off", func(r *models.Run) { r.Settings.NoCache = true })
		if noCache.CachedCalls != 0 || noCache.PromptTokens != plain.PromptTokens || math.Abs(*noCache.CostUSD-*plain.CostUSD) > 1e-12 {
			t.Errorf("cache off: %d cached, %d prompt tokens, $%g; want none cached and the plain run's %d, $%g",
				noCache.CachedCalls, noCache.PromptTokens, *noCache.CostUSD, plain.PromptTokens, *plain.CostUSD)
		}
		unpriced := run("no prices", func(r *models.Run) {
			r.Settings.NoCache = true
			r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = nil, nil
		})
		if unpriced.CostUSD != nil || unpriced.CostSoFar() != nil {
			t.Errorf("no prices: cost %v; want unknown", orNilCost(unpriced.CostUSD))
		}
		mu.Lock()
		mode = "faults"
		mu.Unlock()
		faulty := run("faults", func(r *models.Run) { r.Settings.Seed = 22 })
		// The unreadable answer is repaired (a call of its own), not retried.
		if faulty.Retries != 2 || faulty.Calls != plain.Calls+1 {
			t.Errorf("faults: %d calls, %d retries; want %d calls (one repair) and 2 retries (a 429 and a 500)", faulty.Calls, faulty.Retries, plain.Calls+1)
		}
	})
}

// TestGEvalCachedStepsCallIsNotPaid: a G-Eval run whose evaluation-steps
// call is answered from the cache (an earlier run asked the same) while
// its form calls are not (another seed) counts the steps call as cached,
// and its tokens and cost are those of the calls the judge answered.
func TestGEvalCachedStepsCallIsNotPaid(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj, l := newLedgerJudge(t, 5, nil)
		r := env.startRunner(Config{})
		run := func(name string, seed int64) models.Run {
			t.Helper()
			spec := env.newRun(fj.URL(), 1, 4, 30)
			spec.Name = name
			spec.Method = string(evaluator.MethodGEval)
			spec.Settings.Seed = seed
			spec.MethodSettings = evaluator.MethodSettings{Samples: 3, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
			before := l.totals()
			got := env.waitFinished(env.launch(r, spec).ID, 60*time.Second)
			if got.Status != models.RunSucceeded {
				t.Fatalf("%s: %s (%s)", name, got.Status, got.Error)
			}
			wantLedger(t, name, got, l.totals().minus(before))
			return got
		}
		first := run("first", 1)
		second := run("steps cached", 2)
		if first.CachedCalls != 0 {
			t.Errorf("first: %d cached calls, want 0", first.CachedCalls)
		}
		if second.CachedCalls != 1 || second.Calls != first.Calls {
			t.Errorf("steps cached: %d calls, %d cached; want %d calls, 1 (the steps) cached", second.Calls, second.CachedCalls, first.Calls)
		}
	})
}

// TestKilledAndResumedRunMatchesTheJudgesLedger: a run killed with calls
// out, then taken over by another worker, counts every call the judge
// answered once (the answers cached before the kill are the paid calls
// they were), and none of those it never answered; with the cache on and
// off.
func TestKilledAndResumedRunMatchesTheJudgesLedger(t *testing.T) {
	t.Parallel()
	for _, noCache := range []bool{false, true} {
		name := "cache on"
		if noCache {
			name = "cache off"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				// Four answered, then every call held until the kill.
				const answered = 4
				var mu sync.Mutex
				holding, seen := true, 0
				fj, l := newLedgerJudge(t, 7, func(c judgeCall) string {
					mu.Lock()
					defer mu.Unlock()
					seen++
					if holding && seen > answered {
						return "hang"
					}
					return ""
				})
				t.Cleanup(fj.releaseHeld)
				spec := env.newRun(fj.URL(), 3, 2, 30)
				spec.Settings.Seed = 31
				spec.Settings.NoCache = noCache
				a := env.startRunner(Config{LeaseTTL: leaseTTL})
				run := env.launch(a, spec)
				env.waitRun(run.ID, 15*time.Second, "four batches stored, two calls held", func(r models.Run) bool {
					return r.BatchesDone == answered && fj.InFlight() == 2
				})
				kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := a.Kill(kctx); err != nil {
					t.Errorf("kill: %v", err)
				}
				mu.Lock()
				holding = false
				mu.Unlock()
				b := env.startRunner(Config{LeaseTTL: leaseTTL})
				got := env.waitFinished(run.ID, 60*time.Second, func() { b.Sweep(context.Background()) })
				if got.Status != models.RunSucceeded {
					t.Fatalf("resumed run %s (%s)", got.Status, got.Error)
				}
				totals := l.totals()
				if totals.abandoned != 2 {
					t.Fatalf("%d calls abandoned by the kill, want 2", totals.abandoned)
				}
				wantLedger(t, "resumed", got, totals)
				if got.Calls != 9 || got.CachedCalls != 0 {
					t.Errorf("resumed: %d calls, %d cached; want the 9 batches', none from the cache", got.Calls, got.CachedCalls)
				}
			})
		})
	}
}

// TestHedgedRunMatchesTheJudgesLedger: a run that re-sends a slow call
// counts each copy that reached the judge as a paid call: the copy that
// lost, cancelled, is billed its prompt (see README, "Re-send slow judge
// calls").
func TestHedgedRunMatchesTheJudgesLedger(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		held := false
		fj, l := newLedgerJudge(t, 4, func(c judgeCall) string {
			mu.Lock()
			defer mu.Unlock()
			// After four rounds' answers, the next call is held until the
			// runner gives up on it (its copy answered first).
			if !held && c.Total > 12 && !c.Repair {
				held = true
				return "hold"
			}
			return ""
		})
		// Ordinary answers take a steady time (hedgeCostLatency), so that
		// none but the held call is out twice the median and the run's
		// one copy (hedgeEvery) is left for it.
		l.hold, l.latency = 25*time.Second, hedgeCostLatency
		r := env.startRunner(Config{})
		spec := env.newRun(fj.URL(), 5, 3, 30)
		spec.Settings.Seed = 77
		spec.Settings.NoCache = true
		spec.Settings.HedgeSlowCalls = true
		got := env.waitFinished(env.launch(r, spec).ID, 90*time.Second)
		if got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", got.Status, got.Error)
		}
		// The server learns that the lost copy was cancelled a moment
		// after the client let it go.
		deadline := time.Now().Add(10 * time.Second)
		for fj.InFlight() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		totals := l.totals()
		if totals.cancelled != 1 {
			t.Fatalf("%d held calls given up by the runner; want 1 (re-sent)", totals.cancelled)
		}
		wantLedger(t, "hedged", got, totals)
	})
}

// TestUnreadableAnswersArePaid: a judge whose every answer (after
// G-Eval's steps) holds no score still bills each one: whatever the
// method, the run's tokens and cost are what the judge billed, and every
// request it answered is one of the run's calls or retries.
func TestUnreadableAnswersArePaid(t *testing.T) {
	t.Parallel()
	for _, method := range []evaluator.Method{evaluator.MethodBatchEval, evaluator.MethodGEval, evaluator.MethodLLMEval, evaluator.MethodCloserLook} {
		t.Run(string(method), func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj, l := newLedgerJudge(t, 6, func(c judgeCall) string {
					if method == evaluator.MethodGEval && c.Total == 1 {
						return "" // the steps
					}
					return "unreadable"
				})
				r := env.startRunner(Config{Breaker: BreakerConfig{Threshold: -1}})
				spec := env.newRun(fj.URL(), 1, 4, 30)
				spec.Method = string(method)
				spec.Settings.NoCache = true
				spec.MethodSettings = evaluator.MethodSettings{Samples: 3, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
				got := env.waitFinished(env.launch(r, spec).ID, 60*time.Second)
				if got.Status == models.RunSucceeded {
					t.Fatalf("run succeeded on unreadable answers")
				}
				totals := l.totals()
				if totals.requests == 0 || got.PromptTokens == 0 {
					t.Fatalf("judge received %d requests; run counted %d prompt tokens", totals.requests, got.PromptTokens)
				}
				wantLedger(t, string(method), got, totals)
			})
		})
	}
}

// TestTimedOutAttemptIsBilledItsPrompt: an attempt that timed out after
// its request reached the judge is billed (README: "Timeouts cost money";
// each retry of one "is billed"): the run counts its prompt, the tokens of
// the retry's answer to the same request, as it counts a re-sent copy
// cancelled while it was answered (regression: it counted nothing, and
// the run read cheaper than the judge's bill).
func TestTimedOutAttemptIsBilledItsPrompt(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		target := ""
		fj, l := newLedgerJudge(t, 3, func(c judgeCall) string {
			mu.Lock()
			defer mu.Unlock()
			if target == "" && !c.Repair {
				target = c.Key
			}
			if c.Key == target && !c.Repair && c.N == 1 {
				return "hold" // past the call's 1 s timeout
			}
			return ""
		})
		l.hold = 10 * time.Second
		r := env.startRunner(Config{Breaker: BreakerConfig{Threshold: -1}})
		got := env.waitFinished(env.launch(r, env.newRun(fj.URL(), 1, 1, 1)).ID, 60*time.Second)
		if got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", got.Status, got.Error)
		}
		deadline := time.Now().Add(10 * time.Second)
		for fj.InFlight() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		totals := l.totals()
		if totals.cancelled != 1 || got.Retries != 1 {
			t.Fatalf("%d requests given up by the runner, %d retries; want the one timeout", totals.cancelled, got.Retries)
		}
		wantLedger(t, "timed out once", got, totals)
	})
}

// TestGEvalRunsLaunchedTogetherShareTheStepsCall: two G-Eval runs launched
// at once (an experiment's settings) ask for the same evaluation steps;
// one call is made and the other run counts it as cached, so the two runs'
// paid calls and tokens add up to what the judge received and billed.
func TestGEvalRunsLaunchedTogetherShareTheStepsCall(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj, l := newLedgerJudge(t, 8, nil)
		l.latency = 20 * time.Millisecond // the steps call is still out when the second run asks
		spec := func(seed int64) models.Run {
			s := env.newRun(fj.URL(), 1, 4, 30)
			s.Name = fmt.Sprintf("seed %d", seed)
			s.Method = string(evaluator.MethodGEval)
			s.Settings.Seed = seed
			s.MethodSettings = evaluator.MethodSettings{Samples: 3, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
			return s
		}
		a, b := env.launch(env.jobs, spec(1)), env.launch(env.jobs, spec(2))
		env.startRunner(Config{})
		a, b = env.waitFinished(a.ID, 60*time.Second), env.waitFinished(b.ID, 60*time.Second)
		for _, r := range []models.Run{a, b} {
			if r.Status != models.RunSucceeded {
				t.Fatalf("%s: %s (%s)", r.Name, r.Status, r.Error)
			}
		}
		got := l.totals()
		paid, tokens := a.PaidCalls()+b.PaidCalls()+a.Retries+b.Retries, [2]int{a.PromptTokens + b.PromptTokens, a.CompletionTokens + b.CompletionTokens}
		if paid != got.requests || tokens != [2]int{got.prompt, got.completion} {
			t.Errorf("the runs paid %d calls (%d and %d cached) for %v tokens; the judge received %d requests and billed %d+%d",
				paid, a.CachedCalls, b.CachedCalls, tokens, got.requests, got.prompt, got.completion)
		}
		if a.CachedCalls+b.CachedCalls != 1 {
			t.Errorf("%d and %d calls cached; want the steps call cached by one run", a.CachedCalls, b.CachedCalls)
		}
	})
}
