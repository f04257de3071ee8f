package runner

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestSpendingCap: a run with a cap stops sending calls once the cost so
// far plus the next call's estimate would pass it, fails saying so, and
// finishes after the cap is raised and the run resumed. One call of the
// fake judge at the test prices ($1 / $2 per million tokens) costs well
// under a cent and more than a micro-dollar.
func TestSpendingCap(t *testing.T) {
	t.Parallel()
	tiny, ample := 1e-6, 100.0
	for _, tc := range []struct {
		name        string
		capUSD      *float64
		concurrency int
		wantStatus  string
		wantCalls   int // judge requests before the run ended
	}{
		{"no cap", nil, 1, models.RunSucceeded, 3},
		{"ample cap", &ample, 1, models.RunSucceeded, 3},
		{"ample cap, calls side by side", &ample, 3, models.RunSucceeded, 3},
		// The first call has no estimate yet and goes; after it the run
		// has spent more than the cap, so the second is never sent.
		{"cap below one call", &tiny, 1, models.RunFailed, 1},
		// Side by side too: the first call goes alone, and the others
		// wait for its cost (they used to go with it, past the cap).
		{"cap below one call, calls side by side", &tiny, 3, models.RunFailed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
				r := env.startRunner(Config{LeaseTTL: leaseTTL})
				spec := env.newRun(fj.URL(), 1, tc.concurrency, 30) // 3 batches
				spec.Settings.SpendCapUSD = tc.capUSD
				run := env.waitFinished(env.launch(r, spec).ID, 20*time.Second)
				if run.Status != tc.wantStatus || fj.Total() != tc.wantCalls {
					t.Fatalf("status %s after %d judge requests (error %q); want %s after %d", run.Status, fj.Total(), run.Error, tc.wantStatus, tc.wantCalls)
				}
				if tc.wantStatus != models.RunFailed {
					return
				}
				if !strings.Contains(run.Error, "spending cap reached") || run.CostUSD == nil || *run.CostUSD <= tiny {
					t.Errorf("capped run: error %q, cost %v", run.Error, run.CostUSD)
				}
				// Raised cap: the run resumes and sends only what is left.
				if _, err := r.Resume(context.Background(), env.ws.ID, run.ID, models.Requeue{SpendCapUSD: &ample}); err != nil {
					t.Fatalf("resume: %v", err)
				}
				run = env.waitFinished(run.ID, 20*time.Second)
				if run.Status != models.RunSucceeded || fj.Total() != 3 || run.MissingScores != 0 {
					t.Errorf("after raising the cap: %s, %d requests in all, %d missing (error %q); want succeeded after 3",
						run.Status, fj.Total(), run.MissingScores, run.Error)
				}
			})
		})
	}
}

// TestSpendCapRules: the cap lets a call go only when the cost known so far
// plus the estimate of the calls under way and of this one stays within
// it; otherwise the call waits for the calls under way, and fails only
// when none is left. Prices are $1 per million tokens either way, so a
// call of 1,000,000 tokens costs $1.
func TestSpendCapRules(t *testing.T) {
	t.Parallel()
	one := 1.0
	prices := models.JudgeSnapshot{PriceInputPerMTok: &one, PriceOutputPerMTok: &one}
	dollars := func(d float64) judge.Response { return judge.Response{PromptTokens: int(d * 1e6)} }
	bg := context.Background()
	r := &Runner{draining: make(chan struct{})}
	admit := func(c *spendCap) error { return c.admit(bg, r.draining) }
	// waits reports whether admit is still waiting after a moment; if it
	// is, the returned channel gets its result once it ends.
	waits := func(c *spendCap, stop context.Context) (bool, chan error) {
		got := make(chan error, 1)
		go func() { got <- c.admit(stop, r.draining) }()
		select {
		case err := <-got:
			got <- err
			return false, got
		case <-time.After(50 * time.Millisecond):
			return true, got
		}
	}
	newCap := func(capUSD, spent float64, calls int) *spendCap {
		return &spendCap{capUSD: capUSD, prices: prices, spent: spent, calls: calls, answered: make(chan struct{})}
	}

	t.Run("the first call goes alone", func(t *testing.T) {
		c := newCap(10, 0, 0)
		if err := admit(c); err != nil {
			t.Fatalf("first call: %v", err)
		}
		waiting, got := waits(c, bg)
		if !waiting {
			t.Fatalf("a second call went before the first answered: %v", <-got)
		}
		c.settle(dollars(4), nil)
		if err := <-got; err != nil {
			t.Fatalf("second call after a $4 answer, cap $10: %v", err)
		}
		// $4 spent, $4 under way, $4 more would pass $10.
		if waiting, got := waits(c, bg); !waiting {
			t.Fatalf("a third call went with $8 spent or under way: %v", <-got)
		} else {
			c.settle(dollars(4), nil)
			var sc *SpendCapError
			if err := <-got; !errors.As(err, &sc) || sc.SpentUSD != 8 || sc.NextUSD != 4 || sc.CapUSD != 10 {
				t.Fatalf("third call with $8 spent and nothing under way: %v, want the cap reached ($8 spent, $4 next)", err)
			}
		}
	})

	t.Run("a paid answer replayed from the cache counts", func(t *testing.T) {
		// A unit cut short by a crash gets its paid answer back from the
		// answer cache: it counts as spent, though admit never saw it.
		c := newCap(10, 0, 0)
		c.replayed(dollars(3))
		if err := admit(c); err != nil {
			t.Fatalf("a call with $3 spent, $3 a call, cap $10: %v", err)
		}
		c.settle(dollars(5), nil)
		var sc *SpendCapError
		if err := admit(c); !errors.As(err, &sc) || sc.SpentUSD != 8 || sc.NextUSD != 4 {
			t.Fatalf("with $8 spent over two calls: %v, want the cap reached ($8 spent, $4 next)", err)
		}
	})

	t.Run("calls under way count at the estimate", func(t *testing.T) {
		c := newCap(10, 2, 2) // $1 a call so far
		for i := range 8 {
			if err := admit(c); err != nil {
				t.Fatalf("call %d of 8 within $10: %v", i+1, err)
			}
		}
		waiting, got := waits(c, bg)
		if !waiting {
			t.Fatalf("a ninth call went with $2 spent and 8 under way: %v", <-got)
		}
		// Cheaper answers than estimated make room.
		for range 4 {
			c.settle(dollars(0.25), nil)
		}
		if err := <-got; err != nil {
			t.Fatalf("after four $0.25 answers ($3 spent for 6 calls, 4 under way): %v", err)
		}
		if c.out != 5 || c.calls != 6 || c.spent != 3 {
			t.Errorf("account: %d under way, %d calls, $%g; want 5, 6, $3", c.out, c.calls, c.spent)
		}
	})

	t.Run("a call without an answer costs nothing", func(t *testing.T) {
		c := newCap(1, 0, 0)
		if err := admit(c); err != nil {
			t.Fatal(err)
		}
		c.settle(judge.Response{}, errors.New("timeout"))
		if c.calls != 0 || c.spent != 0 || c.out != 0 {
			t.Fatalf("account after a failed call: %d calls, $%g, %d under way", c.calls, c.spent, c.out)
		}
		if err := admit(c); err != nil {
			t.Fatalf("the next call after a failed first one: %v", err)
		}
	})

	// An endpoint that reports no usage: its answers cost nothing known,
	// and once one has come the calls go side by side again (they waited
	// for one another for ever when only answers with tokens counted).
	t.Run("answers without usage count at no cost", func(t *testing.T) {
		c := newCap(1, 0, 0)
		if err := admit(c); err != nil {
			t.Fatal(err)
		}
		c.settle(judge.Response{}, nil)
		for i := range 5 {
			if err := admit(c); err != nil {
				t.Fatalf("call %d after an answer without usage: %v", i+2, err)
			}
		}
		if c.calls != 1 || c.spent != 0 || c.out != 5 {
			t.Errorf("account: %d calls, $%g, %d under way; want 1, $0, 5", c.calls, c.spent, c.out)
		}
	})

	t.Run("the call's end or draining ends the wait", func(t *testing.T) {
		c := newCap(10, 0, 0)
		if err := admit(c); err != nil {
			t.Fatal(err)
		}
		stop, cancel := context.WithCancelCause(bg)
		waiting, got := waits(c, stop)
		if !waiting {
			t.Fatalf("did not wait: %v", <-got)
		}
		boom := errors.New("the run was cancelled")
		cancel(boom)
		if err := <-got; !errors.Is(err, boom) {
			t.Fatalf("stopped wait: %v", err)
		}
		waiting, got = waits(c, bg)
		if !waiting {
			t.Fatalf("did not wait: %v", <-got)
		}
		close(r.draining)
		if err := <-got; !errors.Is(err, errDraining) {
			t.Fatalf("drained wait: %v", err)
		}
		if c.out != 1 {
			t.Errorf("%d calls under way, want the first only: a call whose wait ended took a place", c.out)
		}
	})
}

// TestSpendCapFromStoredSpending: what an execution starts from. The
// stored calls count the answer cache's too (at no cost), so the estimate
// divides by the paid ones; a run that has spent nothing yet (its calls
// failed or came from the cache) has no estimate, and its first call goes
// alone, as in a new run (it went with every other one, at $0 a call).
func TestSpendCapFromStoredSpending(t *testing.T) {
	t.Parallel()
	one, capUSD, zero, six := 1.0, 10.0, 0.0, 6.0
	prices := models.JudgeSnapshot{PriceInputPerMTok: &one, PriceOutputPerMTok: &one}
	for _, tc := range []struct {
		name       string
		sp         models.RunSpend
		wantCalls  int
		wantSpent  float64
		secondWait bool // a second call waits for the first's cost
	}{
		{"new run", models.RunSpend{CapUSD: &capUSD}, 0, 0, true},
		{"calls that cost nothing", models.RunSpend{CapUSD: &capUSD, CostUSD: &zero, Calls: 3, CachedCalls: 1}, 0, 0, true},
		{"paid and cached calls", models.RunSpend{CapUSD: &capUSD, CostUSD: &six, Calls: 5, CachedCalls: 2}, 3, 6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := spendCapFrom(prices, tc.sp)
			if c.calls != tc.wantCalls || c.spent != tc.wantSpent {
				t.Fatalf("account: %d calls, $%g; want %d, $%g", c.calls, c.spent, tc.wantCalls, tc.wantSpent)
			}
			bg := context.Background()
			if err := c.admit(bg, nil); err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() { got <- c.admit(bg, nil) }()
			if !tc.secondWait {
				// It goes without anyone settling a call: however late its
				// goroutine runs (a loaded machine), it ends by itself.
				select {
				case err := <-got:
					if err != nil {
						t.Errorf("a second call with $%g of $10 spent over %d calls: %v", c.spent, c.calls, err)
					}
				case <-time.After(10 * time.Second):
					t.Errorf("a second call waits with $%g of $10 spent over %d calls", c.spent, c.calls)
					c.settle(judge.Response{PromptTokens: 1}, nil)
					<-got
				}
				return
			}
			select {
			case err := <-got:
				t.Errorf("a second call went (%v) before any call's cost was known", err)
			case <-time.After(50 * time.Millisecond):
				c.settle(judge.Response{PromptTokens: 1}, nil)
				<-got
			}
		})
	}
	if spendCapFrom(prices, models.RunSpend{}) != nil {
		t.Error("an account for a run without a cap")
	}
}

// TestSpendCapRefusedRepairIsSentOnResume: when the cap refuses a batch's
// repair request, the batch stays pending (QA: it was stored done with
// its missing scores, a gap no resume filled, and the refused request was
// counted as a call). The answered call is counted; after the cap is
// raised, the resume finds the first answer in the answer cache and sends
// the repair.
func TestSpendCapRefusedRepairIsSentOnResume(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		repairs := 0
		// Every first answer leaves its scores out: whichever unit goes
		// first needs its repair.
		fj := newFakeJudge(t, simjudge.Options{Seed: 7, MissRate: 1}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Repair {
				mu.Lock()
				repairs++
				mu.Unlock()
			}
			return false
		})
		r := env.startRunner(Config{LeaseTTL: leaseTTL})
		tiny, ample := 1e-6, 100.0
		spec := env.newRun(fj.URL(), 1, 1, 30) // 3 batches
		spec.Settings.SpendCapUSD = &tiny
		run := env.waitFinished(env.launch(r, spec).ID, 20*time.Second)
		if run.Status != models.RunFailed || !strings.Contains(run.Error, "spending cap reached") || fj.Total() != 1 {
			t.Fatalf("run %s (%q) after %d requests; want failed at the cap after the first", run.Status, run.Error, fj.Total())
		}
		if run.Calls != 1 || run.BatchesDone != 0 || run.CostUSD == nil || *run.CostUSD <= 0 {
			t.Errorf("capped run counts %d calls, %d batches done, cost %v; want the one answered call, no batch done", run.Calls, run.BatchesDone, run.CostUSD)
		}
		for _, b := range env.batches(run.ID) {
			if b.Status != models.BatchPending {
				t.Errorf("batch %d is %s (problems %v), want pending", b.ID, b.Status, b.Problems)
			}
		}
		if _, err := r.Resume(context.Background(), env.ws.ID, run.ID, models.Requeue{SpendCapUSD: &ample}); err != nil {
			t.Fatalf("resume: %v", err)
		}
		run = env.waitFinished(run.ID, 20*time.Second)
		mu.Lock()
		sentRepairs := repairs
		mu.Unlock()
		if run.Status != models.RunSucceeded && run.Status != models.RunFinishedWithGaps {
			t.Fatalf("after raising the cap: %s (%q)", run.Status, run.Error)
		}
		if sentRepairs == 0 {
			t.Errorf("no repair request was ever sent; the test shows nothing (or the refused one was never retried)")
		}
		// Every request the judge answered is counted once as paid; the
		// first answer came back from the cache on the resume.
		if paid := run.Calls - run.CachedCalls; paid != fj.Total() || run.CachedCalls < 1 {
			t.Errorf("after the resume: %d calls, %d from the cache; the judge answered %d requests", run.Calls, run.CachedCalls, fj.Total())
		}
		for _, b := range env.batches(run.ID) {
			if strings.Contains(strings.Join(b.Problems, " "), "spending cap") {
				t.Errorf("batch %d kept the cap's refusal as its answer: %v", b.ID, b.Problems)
			}
		}
	})
}

// TestSpendCapErrorShowsSmallAmounts: the cap's message wrote amounts with
// four decimals, so a run that had spent a few micro-dollars read "spent
// $0.0000", as if nothing; tiny amounts now keep two significant digits.
func TestSpendCapErrorShowsSmallAmounts(t *testing.T) {
	for _, tc := range []struct {
		err     SpendCapError
		want    []string
		notWant string
	}{
		{SpendCapError{CapUSD: 0.000001, SpentUSD: 0.0000015, NextUSD: 0.00000084},
			[]string{"spent $0.0000015 of its $0.000001 cap", "cost about $0.00000084;"}, "$0.0000 "},
		{SpendCapError{CapUSD: 0.00002, SpentUSD: 0.00001, NextUSD: 0.000049},
			[]string{"spent $0.00001 of its $0.00002 cap", "cost about $0.000049;"}, "$0.0000 "},
		// Amounts of a cent or more, and nothing spent, read as before.
		{SpendCapError{CapUSD: 2.5, SpentUSD: 2.49871, NextUSD: 0.0123},
			[]string{"spent $2.4987 of its $2.5 cap", "cost about $0.0123;"}, ""},
		{SpendCapError{CapUSD: 0.001, SpentUSD: 0, NextUSD: 0.00012},
			[]string{"spent $0.0000 of its $0.001 cap", "cost about $0.0001;"}, ""},
	} {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
		if tc.notWant != "" && strings.Contains(msg, tc.notWant) {
			t.Errorf("message %q shows a tiny amount as %q", msg, tc.notWant)
		}
	}
}
