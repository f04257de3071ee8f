package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
)

// hedgeStep is how the fake judge treats one call: it answers (or fails
// with err) after delay; notSent waits, never sending, until the call is
// cancelled (a copy that never got a slot); slotAfterOriginal waits until
// the first call of its text has returned, then tries to send (a copy
// whose slot is the one the original frees).
type hedgeStep struct {
	delay time.Duration
	// latency is the latency the answer reports (delay when 0): warm-up
	// answers report more than they take, so that a loaded machine
	// delaying one of them does not get it hedged.
	latency           time.Duration
	err               *Error
	notSent           bool
	slotAfterOriginal bool
	// connecting makes an attempt that never writes its request out (its
	// connection is still being opened) until the call is cancelled.
	connecting bool
}

// hedgeJudge is a fake inner judge for the hedge: the k-th call (from 0)
// of each request text is treated as plan says; every answer reports
// latency delay and 100 prompt tokens, 7 completion tokens.
type hedgeJudge struct {
	plan func(text string, k int) hedgeStep

	mu        sync.Mutex
	seen      map[string]int
	calls     int
	returned  map[string]chan struct{} // text -> closed when its first call returned
	cancelled []string                 // "text#k" of the calls whose context we ended
}

func (j *hedgeJudge) Complete(ctx context.Context, r Request) (Response, error) {
	text := r.Messages[0].Content
	j.mu.Lock()
	k := j.seen[text]
	j.seen[text]++
	j.calls++
	j.mu.Unlock()
	s := warmStep
	if j.plan != nil {
		s = j.plan(text, k)
	}
	name := fmt.Sprintf("%s#%d", text, k)
	j.mu.Lock()
	if j.returned == nil {
		j.returned = map[string]chan struct{}{}
	}
	if j.returned[text] == nil {
		j.returned[text] = make(chan struct{})
	}
	back := j.returned[text]
	j.mu.Unlock()
	if k == 0 {
		defer close(back)
	}
	cancelled := func(attempts int) (Response, error) {
		j.mu.Lock()
		j.cancelled = append(j.cancelled, name)
		j.mu.Unlock()
		return Response{}, &Error{Kind: KindCancelled, Attempts: attempts, Err: context.Cause(ctx)}
	}
	if s.notSent {
		<-ctx.Done()
		return cancelled(0)
	}
	if s.slotAfterOriginal {
		<-back
		time.Sleep(20 * time.Millisecond) // the hedger has the original's answer
	}
	if err := attemptStarting(ctx); err != nil {
		return cancelled(0)
	}
	if s.connecting {
		<-ctx.Done()
		_, err := cancelled(1)
		err.(*Error).NeverSent = true
		return Response{}, err
	}
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return cancelled(1)
	}
	if s.err != nil {
		e := *s.err
		e.Attempts = 1
		return Response{}, &e
	}
	lat := s.latency
	if lat == 0 {
		lat = s.delay
	}
	return Response{Choices: []Choice{{Text: "answer " + name}}, Model: "m", PromptTokens: 100, CompletionTokens: 7,
		Attempts: 1, Latency: lat}, nil
}

func (j *hedgeJudge) wasCancelled(name string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range j.cancelled {
		if c == name {
			return true
		}
	}
	return false
}

func textRequest(s string) Request {
	return Request{Messages: []evaluator.Message{{Role: "user", Content: s}}}
}

// warmStep is how the warm-up calls are answered: at once, reporting
// 40 ms, so the median of the run's record is 40 ms and the hedge's
// threshold 80 ms.
var warmStep = hedgeStep{delay: time.Millisecond, latency: 40 * time.Millisecond}

// warmUp has the cache answer n quick calls (warmStep).
func warmUp(t *testing.T, c *Cache, n int) {
	t.Helper()
	for i := range n {
		ctx := WithUnit(context.Background(), Unit{ID: int64(1000 + i), Paid: &PaidLog{}})
		if _, err := c.Complete(ctx, textRequest(fmt.Sprintf("warm %d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHedgedSlowCalls: with the setting on, a call still out at twice
// the run's median answer gets one copy; the first answer wins, the other
// copy is cancelled and counted once as a failed paid call; a copy that
// was never sent is not counted; a hedge never turns a success into a
// failure; and nothing is re-sent with the setting off or before the run
// has 10 answers.
func TestHedgedSlowCalls(t *testing.T) {
	slow := hedgeStep{delay: 5 * time.Second}
	fast := hedgeStep{delay: 10 * time.Millisecond}
	cases := []struct {
		name   string
		hedge  bool
		warm   int
		orig   hedgeStep
		copy   hedgeStep
		answer string // "" when the call fails
		errIs  ErrorKind
		// the paid calls logged for the unit, in order (IDs not compared)
		paid          []PaidCall
		resent, calls int // re-sends counted, calls the fake judge got
		extra         int // ExtraCalls of the answer or the error
		cancelled     string
		// assumed is the prompt tokens OnAssumedLoss is told of (a copy
		// cancelled while out, counted at the winner's prompt), 0: never.
		assumed int
		// floor is the hedger's least wait before a copy (0 here unless
		// set: the warm answers take milliseconds).
		floor time.Duration
	}{
		{name: "on, out past twice the median but under the default 1 s floor: no copy", hedge: true, warm: 10,
			floor: HedgeMinDelay, orig: hedgeStep{delay: 300 * time.Millisecond},
			answer: "answer slow#0", paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, calls: 11},
		{name: "off: a slow call is never re-sent", hedge: false, warm: 10, orig: hedgeStep{delay: 150 * time.Millisecond},
			answer: "answer slow#0", paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, calls: 11},
		{name: "on, before 10 answers: no copy", hedge: true, warm: 9, orig: hedgeStep{delay: 150 * time.Millisecond},
			answer: "answer slow#0", paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, calls: 10},
		{name: "on, a slow call: the fast copy's answer, the original cancelled and counted once", hedge: true, warm: 10,
			orig: slow, copy: fast, answer: "answer slow#1",
			paid:   []PaidCall{{PromptTokens: 100, CompletionTokens: 7}, {PromptTokens: 100, Failed: true}},
			resent: 1, calls: 12, extra: 1, cancelled: "slow#0", assumed: 100},
		{name: "on, the original answers first: the copy cancelled and counted once", hedge: true, warm: 10,
			orig: hedgeStep{delay: 200 * time.Millisecond}, copy: slow, answer: "answer slow#0",
			paid:   []PaidCall{{PromptTokens: 100, CompletionTokens: 7}, {PromptTokens: 100, Failed: true}},
			resent: 1, calls: 12, extra: 1, cancelled: "slow#1", assumed: 100},
		{name: "on, a copy never sent (no slot): not counted", hedge: true, warm: 10,
			orig: hedgeStep{delay: 300 * time.Millisecond}, copy: hedgeStep{notSent: true}, answer: "answer slow#0",
			paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, resent: 0, calls: 12, cancelled: "slow#1"},
		{name: "on, a copy cancelled while its connection opens: not re-sent, not counted", hedge: true, warm: 10,
			orig: hedgeStep{delay: 300 * time.Millisecond}, copy: hedgeStep{connecting: true}, answer: "answer slow#0",
			paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, resent: 0, calls: 12, cancelled: "slow#1"},
		{name: "on, a copy whose slot comes as the original answers: not sent, not counted", hedge: true, warm: 10,
			orig: hedgeStep{delay: 300 * time.Millisecond}, copy: hedgeStep{slotAfterOriginal: true}, answer: "answer slow#0",
			paid: []PaidCall{{PromptTokens: 100, CompletionTokens: 7}}, resent: 0, calls: 12},
		{name: "on, the original fails while the copy is out: the copy's answer", hedge: true, warm: 10,
			orig: hedgeStep{delay: 150 * time.Millisecond, err: &Error{Kind: KindServer, Status: 500}},
			copy: hedgeStep{delay: 150 * time.Millisecond}, answer: "answer slow#1",
			paid:   []PaidCall{{PromptTokens: 100, CompletionTokens: 7}, {Failed: true}},
			resent: 1, calls: 12, extra: 1},
		{name: "on, both fail: the original's error", hedge: true, warm: 10,
			orig: hedgeStep{delay: 300 * time.Millisecond, err: &Error{Kind: KindServer, Status: 500}},
			copy: hedgeStep{delay: 20 * time.Millisecond, err: &Error{Kind: KindTimeout}}, errIs: KindServer,
			paid:   []PaidCall{{Failed: true}, {Failed: true}},
			resent: 1, calls: 12, extra: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &hedgeJudge{seen: map[string]int{}, plan: func(text string, k int) hedgeStep {
				switch {
				case text != "slow":
					return warmStep
				case k == 0:
					return tc.orig
				}
				return tc.copy
			}}
			c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
			c.Run = 1
			if tc.hedge {
				c.Hedge = NewHedger().WithMinDelay(tc.floor)
			}
			var assumed []int
			c.OnAssumedLoss = func(_ context.Context, p, cp int) { assumed = append(assumed, p, cp) }
			warmUp(t, c, tc.warm)
			log := &PaidLog{}
			started := time.Now()
			resp, err := c.Complete(WithUnit(context.Background(), Unit{ID: 5, Paid: log}), textRequest("slow"))
			took := time.Since(started)
			if took > 2*time.Second {
				t.Errorf("the call took %v: it waited for the slow copy", took)
			}
			if tc.answer != "" {
				if err != nil {
					t.Fatalf("err = %v, want the answer %q", err, tc.answer)
				}
				if resp.Text() != tc.answer {
					t.Errorf("answer %q, want %q", resp.Text(), tc.answer)
				}
				if resp.ExtraCalls != tc.extra {
					t.Errorf("ExtraCalls = %d, want %d", resp.ExtraCalls, tc.extra)
				}
				// The answer counts the tokens of every paid call logged.
				var p, cp int
				for _, pc := range tc.paid {
					p, cp = p+pc.PromptTokens, cp+pc.CompletionTokens
				}
				if resp.PromptTokens != p || resp.CompletionTokens != cp {
					t.Errorf("answer counts %d+%d tokens, want %d+%d", resp.PromptTokens, resp.CompletionTokens, p, cp)
				}
			} else {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.errIs {
					t.Fatalf("err = %v, want a %s judge error", err, tc.errIs)
				}
				if e.ExtraCalls != tc.extra {
					t.Errorf("ExtraCalls = %d, want %d", e.ExtraCalls, tc.extra)
				}
			}
			got := log.Calls()
			if len(got) != len(tc.paid) {
				t.Fatalf("paid calls %+v, want %d", got, len(tc.paid))
			}
			ids := map[string]bool{}
			for i, w := range tc.paid {
				g := got[i]
				if g.ID == "" || ids[g.ID] || g.PromptTokens != w.PromptTokens || g.CompletionTokens != w.CompletionTokens || g.Failed != w.Failed || g.Replayed {
					t.Errorf("paid call %d: %+v, want %+v with an identity of its own", i, g, w)
				}
				ids[g.ID] = true
			}
			if n := c.Hedge.Resent(); n != tc.resent {
				t.Errorf("Resent() = %d, want %d", n, tc.resent)
			}
			if want := []int{tc.assumed, 0}; (tc.assumed == 0 && len(assumed) != 0) || (tc.assumed != 0 && fmt.Sprint(assumed) != fmt.Sprint(want)) {
				t.Errorf("OnAssumedLoss was told %v, want %v", assumed, map[bool]any{true: want, false: "nothing"}[tc.assumed != 0])
			}
			j.mu.Lock()
			calls := j.calls
			j.mu.Unlock()
			if calls != tc.calls {
				t.Errorf("the judge got %d calls, want %d", calls, tc.calls)
			}
			if tc.cancelled != "" && !j.wasCancelled(tc.cancelled) {
				t.Errorf("%s was not cancelled (cancelled: %v)", tc.cancelled, j.cancelled)
			}
			// The winner is the answer stored, once: the next identical
			// request is answered from the store, not by the judge.
			if tc.answer != "" {
				c2 := NewCache(j, c.store, "http://judge", "m")
				again, err := c2.Complete(context.Background(), textRequest("slow"))
				if err != nil || again.Text() != tc.answer {
					t.Errorf("stored answer %q (err %v), want %q", again.Text(), err, tc.answer)
				}
			}
		})
	}
}

// TestHedgeWaitsForTheRecord: a call sent before the run had 10 answers
// gets its copy once the 10th answer arrives (it was out long enough).
func TestHedgeWaitsForTheRecord(t *testing.T) {
	j := &hedgeJudge{seen: map[string]int{}, plan: func(text string, k int) hedgeStep {
		if text == "slow" && k == 0 {
			return hedgeStep{delay: 5 * time.Second}
		}
		return warmStep
	}}
	c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
	c.Hedge = NewHedger().WithMinDelay(0)
	warmUp(t, c, 9)
	done := make(chan Response, 1)
	go func() {
		resp, _ := c.Complete(WithUnit(context.Background(), Unit{ID: 5, Paid: &PaidLog{}}), textRequest("slow"))
		done <- resp
	}()
	time.Sleep(150 * time.Millisecond) // the slow call is out past 80 ms
	select {
	case <-done:
		t.Fatal("the slow call came back before the record had 10 answers")
	default:
	}
	warmUp(t, c, 10) // the 10th answer (and more)
	select {
	case resp := <-done:
		if resp.Text() != "answer slow#1" {
			t.Errorf("answer %q, want the copy's", resp.Text())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no copy was sent once the record had 10 answers")
	}
}

// TestHedgeCap: at most one re-send per 20 calls sent so far, plus one,
// however many calls are slow at once.
func TestHedgeCap(t *testing.T) {
	for _, tc := range []struct{ warm, slow, want int }{
		{warm: 10, slow: 4, want: 1},  // 14 sent: 14/20+1 = 1
		{warm: 40, slow: 6, want: 3},  // 46 sent: 46/20+1 = 3
		{warm: 60, slow: 2, want: 2},  // both get one: 62/20+1 = 4
		{warm: 19, slow: 25, want: 3}, // 44 sent: 44/20+1 = 3
	} {
		t.Run(fmt.Sprintf("%d answers, %d slow", tc.warm, tc.slow), func(t *testing.T) {
			j := &hedgeJudge{seen: map[string]int{}, plan: func(text string, k int) hedgeStep {
				if k == 0 && len(text) > 4 && text[:4] == "slow" {
					return hedgeStep{delay: 400 * time.Millisecond}
				}
				return warmStep
			}}
			c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
			c.Hedge = NewHedger().WithMinDelay(0)
			warmUp(t, c, tc.warm)
			var wg sync.WaitGroup
			for i := range tc.slow {
				wg.Go(func() {
					_, _ = c.Complete(WithUnit(context.Background(), Unit{ID: int64(i), Paid: &PaidLog{}}), textRequest(fmt.Sprintf("slow %d", i)))
				})
			}
			wg.Wait()
			if n := c.Hedge.Resent(); n != tc.want {
				t.Errorf("Resent() = %d, want %d", n, tc.want)
			}
		})
	}
}

// TestHedgeCapCountsCopiesSent: a copy that was never sent (its original
// answered while it waited for its slot) costs nothing and leaves its
// place under the cap to a later slow call. Before, it used the place up:
// in a run of a few calls the cap (one copy until 20 calls) was spent, and
// the later slow call got no copy (TestHedgedRunCostIsItsTokensAtItsPrices
// in the runner, on a loaded machine whose ordinary answers were slow
// enough to be hedged).
func TestHedgeCapCountsCopiesSent(t *testing.T) {
	j := &hedgeJudge{seen: map[string]int{}, plan: func(text string, k int) hedgeStep {
		switch {
		case text == "first" && k == 0:
			return hedgeStep{delay: 200 * time.Millisecond} // past the 80 ms threshold
		case text == "first":
			return hedgeStep{delay: time.Millisecond, slotAfterOriginal: true}
		case text == "second" && k == 0:
			return hedgeStep{delay: 5 * time.Second}
		}
		return warmStep
	}}
	c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
	c.Hedge = NewHedger().WithMinDelay(0)
	warmUp(t, c, 10)
	resp, err := c.Complete(WithUnit(context.Background(), Unit{ID: 1, Paid: &PaidLog{}}), textRequest("first"))
	if err != nil || resp.Text() != "answer first#0" {
		t.Fatalf("the first slow call: %q, %v; want its own answer", resp.Text(), err)
	}
	if n := c.Hedge.Resent(); n != 0 {
		t.Fatalf("Resent() = %d after a copy that was never sent, want 0", n)
	}
	start := time.Now()
	resp, err = c.Complete(WithUnit(context.Background(), Unit{ID: 2, Paid: &PaidLog{}}), textRequest("second"))
	if err != nil || resp.Text() != "answer second#1" {
		t.Errorf("the second slow call: %q, %v after %s; want its copy's answer", resp.Text(), err, time.Since(start).Round(time.Millisecond))
	}
	if n := c.Hedge.Resent(); n != 1 {
		t.Errorf("Resent() = %d, want 1", n)
	}
}

// TestHedgeCapPlaceGivenBack: a slow call whose copy the cap refused
// because another call's copy was pending gets its copy once that copy
// ends unsent (its original answered while it waited for a slot). Before,
// a call refused by the cap never got one: two calls of a small run slow
// at once (a loaded machine) left the slower without its copy.
func TestHedgeCapPlaceGivenBack(t *testing.T) {
	j := &hedgeJudge{seen: map[string]int{}, plan: func(text string, k int) hedgeStep {
		switch {
		case text == "first" && k == 0:
			return hedgeStep{delay: 250 * time.Millisecond}
		case text == "first":
			return hedgeStep{delay: time.Millisecond, slotAfterOriginal: true}
		case text == "second" && k == 0:
			return hedgeStep{delay: 5 * time.Second}
		}
		return warmStep
	}}
	c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
	c.Hedge = NewHedger().WithMinDelay(0)
	warmUp(t, c, 10)
	first := make(chan error, 1)
	go func() {
		_, err := c.Complete(WithUnit(context.Background(), Unit{ID: 1, Paid: &PaidLog{}}), textRequest("first"))
		first <- err
	}()
	// The first's copy is launched at 80 ms and waits until 270 ms; the
	// second's timer fires at 120 ms, while it waits.
	time.Sleep(40 * time.Millisecond)
	start := time.Now()
	resp, err := c.Complete(WithUnit(context.Background(), Unit{ID: 2, Paid: &PaidLog{}}), textRequest("second"))
	if err != nil || resp.Text() != "answer second#1" {
		t.Errorf("the second slow call: %q, %v after %s; want its copy's answer", resp.Text(), err, time.Since(start).Round(time.Millisecond))
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := c.Hedge.Resent(); n != 1 {
		t.Errorf("Resent() = %d, want 1 (the second's copy)", n)
	}
}

// TestHedgeClockPerAttempt: through the real client, a hedged call's clock
// runs only while one of its attempts is out. A call the judge answered
// 429 with a Retry-After longer than the hedge's threshold waits it out
// and retries without a copy (re-sending is on by default: a copy then
// would be one more request to a judge that said it had too many); a call
// whose attempt hangs past the threshold is still re-sent.
func TestHedgeClockPerAttempt(t *testing.T) {
	const warmDelay = 30 * time.Millisecond // the threshold: 2x, 60 ms
	for _, tc := range []struct {
		name string
		// first is how the call's first request is answered: "429" at
		// once with retry-after-ms 400, "hang" after 400 ms.
		first            string
		requests, resent int
	}{
		{"429 with Retry-After past the threshold: waited out, no copy", "429", 2, 0},
		{"an attempt out past the threshold: one copy", "hang", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					Messages []struct{ Content string } `json:"messages"`
				}
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				text := body.Messages[0].Content
				mu.Lock()
				k := seen[text]
				seen[text]++
				mu.Unlock()
				switch {
				case text != "slow":
					time.Sleep(warmDelay)
				case k == 0 && tc.first == "429":
					w.Header().Set("retry-after-ms", "400")
					http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
					return
				case k == 0 && tc.first == "hang":
					select {
					case <-time.After(400 * time.Millisecond):
					case <-r.Context().Done():
						return
					}
				}
				writeOK(w, "answer "+text)
			}))
			t.Cleanup(srv.Close)
			client := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 3, MinBackoff: time.Millisecond,
				MaxRetryAfter: 5 * time.Second, Timeout: 5 * time.Second})
			c := NewCache(client, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
			c.Run = 1
			c.Hedge = NewHedger().WithMinDelay(0)
			warmUp(t, c, hedgeMinAnswers)
			resp, err := c.Complete(WithUnit(context.Background(), Unit{ID: 5, Paid: &PaidLog{}}), textRequest("slow"))
			if err != nil || resp.Text() != "answer slow" {
				t.Fatalf("answer %q, %v; want %q", resp.Text(), err, "answer slow")
			}
			time.Sleep(50 * time.Millisecond) // a copy cancelled as the call returned has reached the server
			mu.Lock()
			got := seen["slow"]
			mu.Unlock()
			if got != tc.requests || c.Hedge.Resent() != tc.resent {
				t.Errorf("the judge got %d requests for the call, %d re-sent; want %d and %d", got, c.Hedge.Resent(), tc.requests, tc.resent)
			}
		})
	}
}
