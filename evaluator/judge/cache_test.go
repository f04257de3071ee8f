package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
)

// memStore is an AnswerStore and BatchLoader in memory; the first
// LoadAnswers waits for hold to close when hold is set.
type memStore struct {
	mu      sync.Mutex
	answers map[AnswerKey][]byte
	loads   [][]AnswerKey
	hold    chan struct{}
}

func (s *memStore) LoadAnswer(ctx context.Context, h string, occ int) ([]byte, bool, error) {
	m, err := s.LoadAnswers(ctx, []AnswerKey{{h, occ}})
	b, ok := m[AnswerKey{h, occ}]
	return b, ok, err
}

func (s *memStore) LoadAnswers(_ context.Context, keys []AnswerKey) (map[AnswerKey][]byte, error) {
	s.mu.Lock()
	first := len(s.loads) == 0
	s.loads = append(s.loads, append([]AnswerKey(nil), keys...))
	s.mu.Unlock()
	if first && s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[AnswerKey][]byte{}
	for _, k := range keys {
		if b, ok := s.answers[k]; ok {
			out[k] = b
		}
	}
	return out, nil
}

func (s *memStore) SaveAnswer(_ context.Context, h string, occ int, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.answers[AnswerKey{h, occ}]; !ok {
		s.answers[AnswerKey{h, occ}] = b
	}
	return nil
}

// echoJudge answers a request with its last message.
type echoJudge struct {
	mu    sync.Mutex
	calls int
}

func (e *echoJudge) Complete(_ context.Context, r Request) (Response, error) {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	return Response{Choices: []Choice{{Text: "fresh " + r.Messages[len(r.Messages)-1].Content}}, Model: "m"}, nil
}

// TestCacheLookupsArriveTogether: the first lookup of a quiet moment is
// made at once by its own call; the calls arriving while it runs share one
// next lookup; every call gets its stored answer or, without one, the
// judge's, which is then stored; the cache is idle afterwards.
func TestCacheLookupsArriveTogether(t *testing.T) {
	req := func(i int) Request {
		return Request{Messages: []evaluator.Message{{Role: "user", Content: fmt.Sprint("sample ", i)}}}
	}
	store := &memStore{answers: map[AnswerKey][]byte{}, hold: make(chan struct{})}
	for i := 0; i < 11; i += 2 { // even requests were answered before
		h, err := RequestHash("http://judge", "m", req(i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(storedAnswer{Choices: []Choice{{Text: fmt.Sprint("stored ", i)}}, Model: "m"})
		store.answers[AnswerKey{h, 0}] = b
	}
	inner := &echoJudge{}
	c := NewCache(inner, store, "http://judge", "m")
	got := make([]string, 11)
	var wg sync.WaitGroup
	wg.Go(func() {
		r, err := c.Complete(context.Background(), req(0))
		if err != nil {
			t.Error(err)
		}
		got[0] = r.Choices[0].Text
	})
	// Wait until the first call's own lookup is under way, then start
	// the others and let the first go once they all wait for the next.
	waitFor(t, func() bool { store.mu.Lock(); defer store.mu.Unlock(); return len(store.loads) == 1 })
	for i := 1; i < 11; i++ {
		wg.Go(func() {
			r, err := c.Complete(context.Background(), req(i))
			if err != nil {
				t.Error(err)
			}
			got[i] = r.Choices[0].Text
		})
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.next != nil && len(c.next.keys) == 10 })
	close(store.hold)
	wg.Wait()
	for i, text := range got {
		want := fmt.Sprint("stored ", i)
		if i%2 == 1 {
			want = fmt.Sprint("fresh sample ", i)
		}
		if text != want {
			t.Errorf("call %d got %q, want %q", i, text, want)
		}
	}
	if len(store.loads) != 2 || len(store.loads[0]) != 1 || len(store.loads[1]) != 10 {
		t.Errorf("lookups made: %v; want one for the first call, then one for the ten that arrived during it", store.loads)
	}
	if inner.calls != 5 {
		t.Errorf("the judge was called %d times, want 5 (the requests never answered)", inner.calls)
	}
	if len(store.answers) != 11 {
		t.Errorf("%d answers stored, want 11", len(store.answers))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loading || c.next != nil {
		t.Errorf("after the calls: loading %v, next %v; want an idle cache", c.loading, c.next)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

// tokenJudge answers every request with 100 prompt and 7 completion tokens.
type tokenJudge struct{ echoJudge }

func (j *tokenJudge) Complete(ctx context.Context, r Request) (Response, error) {
	resp, err := j.echoJudge.Complete(ctx, r)
	resp.PromptTokens, resp.CompletionTokens, resp.Attempts = 100, 7, 1
	return resp, err
}

// TestCacheReplaysAUnitsOwnAnswersAsPaid: an answer stored by a run for a
// unit is, for that unit when nothing of it was counted (a crash cut it
// short), the paid call it was: it comes back with its tokens and is not
// a cache hit. For anyone else it is a free hit as before. A private
// cache (a run that reuses no answers) finds only its own run's answers.
func TestCacheReplaysAUnitsOwnAnswersAsPaid(t *testing.T) {
	req := Request{Messages: []evaluator.Message{{Role: "user", Content: "rate these"}}}
	cases := []struct {
		name        string
		run         int64
		private     bool
		unit        *Unit
		wantCall    bool // the judge is asked (no stored answer found)
		wantTokens  int  // prompt tokens of the response
		wantHit     bool // counted as a cache hit
		storedRun   int64
		storedUnit  int64
		storedPrivy bool // the answer was stored by a private cache
	}{
		{name: "own uncounted unit: paid replay", run: 1, unit: &Unit{ID: 5, Uncounted: true}, storedRun: 1, storedUnit: 5, wantTokens: 100},
		{name: "own unit already counted: free", run: 1, unit: &Unit{ID: 5}, storedRun: 1, storedUnit: 5, wantHit: true},
		{name: "own run, another unit: free", run: 1, unit: &Unit{ID: 6, Uncounted: true}, storedRun: 1, storedUnit: 5, wantHit: true},
		{name: "another run: free", run: 2, unit: &Unit{ID: 5, Uncounted: true}, storedRun: 1, storedUnit: 5, wantHit: true},
		{name: "no unit named: free", run: 1, storedRun: 1, storedUnit: 5, wantHit: true},
		{name: "private: own answer replayed", run: 1, private: true, unit: &Unit{ID: 5, Uncounted: true}, storedRun: 1, storedUnit: 5, storedPrivy: true, wantTokens: 100},
		{name: "private: another run's answer is not found", run: 2, private: true, unit: &Unit{ID: 5, Uncounted: true}, storedRun: 1, storedUnit: 5, wantCall: true, wantTokens: 100},
		{name: "private run's answers stay private", run: 2, unit: &Unit{ID: 5, Uncounted: true}, storedRun: 1, storedUnit: 5, storedPrivy: true, wantCall: true, wantTokens: 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{answers: map[AnswerKey][]byte{}}
			// The first run's call, stored as it happened.
			first := NewCache(&tokenJudge{}, store, "http://judge", "m")
			first.Run, first.Private = tc.storedRun, tc.storedPrivy
			if _, err := first.Complete(WithUnit(context.Background(), Unit{ID: tc.storedUnit, Uncounted: true}), req); err != nil {
				t.Fatal(err)
			}
			j := &tokenJudge{}
			c := NewCache(j, store, "http://judge", "m")
			c.Run, c.Private = tc.run, tc.private
			hits, replays := 0, 0
			c.OnHit = func(_ context.Context, paid Hit) {
				hits++
				// What the answer cost when first paid for (tokenJudge's).
				if paid.PromptTokens != 100 {
					t.Errorf("hit told %d prompt tokens first paid, want 100", paid.PromptTokens)
				}
			}
			c.OnReplay = func(_ context.Context, r Response) {
				if r.PromptTokens == 100 {
					replays++
				}
			}
			ctx := context.Background()
			if tc.unit != nil {
				ctx = WithUnit(ctx, *tc.unit)
			}
			resp, err := c.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			// A paid replay is told (the spending cap counts it); nothing
			// else is.
			if wantReplay := !tc.wantCall && !tc.wantHit; (replays == 1) != wantReplay {
				t.Errorf("%d paid replays told, want %v", replays, wantReplay)
			}
			if (j.calls == 1) != tc.wantCall || resp.PromptTokens != tc.wantTokens || (hits == 1) != tc.wantHit {
				t.Errorf("judge asked %d times, %d prompt tokens, %d hits; want asked %v, %d tokens, hit %v",
					j.calls, resp.PromptTokens, hits, tc.wantCall, tc.wantTokens, tc.wantHit)
			}
		})
	}
}

// TestCachePaidCallsKeepTheirIdentity: each call the judge answers is
// noted on its unit with an identity of its own, also when a seeded judge
// answers two calls alike; an answer replayed as the paid call it was
// (the unit's next execution) is noted with the original's identity and
// tokens; a free hit is not noted (nothing was paid for it).
func TestCachePaidCallsKeepTheirIdentity(t *testing.T) {
	req := Request{Messages: []evaluator.Message{{Role: "user", Content: "rate these"}}}
	complete := func(c *Cache, u Unit) []PaidCall {
		t.Helper()
		log := &PaidLog{}
		u.Paid = log
		if _, err := c.Complete(WithUnit(context.Background(), u), req); err != nil {
			t.Fatal(err)
		}
		return log.Calls()
	}
	store := &memStore{answers: map[AnswerKey][]byte{}}
	first := NewCache(&tokenJudge{}, store, "http://judge", "m")
	first.Run = 1
	orig := complete(first, Unit{ID: 5, Uncounted: true})
	if len(orig) != 1 || orig[0].ID == "" || orig[0].Replayed || orig[0].PromptTokens != 100 || orig[0].CompletionTokens != 7 {
		t.Fatalf("paid calls noted %+v, want one answered call with an identity and 100+7 tokens", orig)
	}

	// The unit's next execution: the stored answer is replayed as paid.
	again := NewCache(&tokenJudge{}, store, "http://judge", "m")
	again.Run = 1
	replay := complete(again, Unit{ID: 5, Uncounted: true})
	if len(replay) != 1 || replay[0].ID != orig[0].ID || !replay[0].Replayed || replay[0].PromptTokens != 100 {
		t.Errorf("replay noted %+v, want the original call %q with its tokens", replay, orig[0].ID)
	}

	// Another execution asks the judge itself (the original's answer was
	// not in the store yet): the same answer, another paid call.
	other := NewCache(&tokenJudge{}, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
	other.Run = 1
	fresh := complete(other, Unit{ID: 5, Uncounted: true})
	if len(fresh) != 1 || fresh[0].ID == "" || fresh[0].ID == orig[0].ID || fresh[0].Replayed {
		t.Errorf("a second paid call noted %+v, want an identity of its own (not %q)", fresh, orig[0].ID)
	}

	// A free hit (the unit's calls are counted already) is no paid call.
	hit := NewCache(&tokenJudge{}, store, "http://judge", "m")
	hit.Run = 1
	if free := complete(hit, Unit{ID: 5}); len(free) != 0 {
		t.Errorf("a free hit noted %+v as paid", free)
	}
}

// gateJudge answers after gate closes, counting its calls, each answer
// numbered so that two calls give different answers.
type gateJudge struct {
	gate  chan struct{}
	mu    sync.Mutex
	calls int
}

func (g *gateJudge) Complete(ctx context.Context, r Request) (Response, error) {
	g.mu.Lock()
	g.calls++
	n := g.calls
	g.mu.Unlock()
	<-g.gate
	return Response{Choices: []Choice{{Text: fmt.Sprint("answer ", n)}}, Model: "m", PromptTokens: 10, Attempts: 1}, nil
}

// TestFlightsShareIdenticalCalls: runs of one workspace that send the same
// request at the same time (an experiment's methods launched together) pay
// for one call; the others get its answer as from the store (free,
// counted as cached), so each replays the same answer later (QA: three
// runs paid for the same 12 requests, and a re-run read a sibling's
// answer). Just after, the answer is still shared; other workspaces and
// private caches do not share.
func TestFlightsShareIdenticalCalls(t *testing.T) {
	req := Request{Messages: []evaluator.Message{{Role: "user", Content: "rate these"}}}
	flights := NewFlights()
	j := &gateJudge{gate: make(chan struct{})}
	newCache := func(scope string, run int64, private bool) (*Cache, *int) {
		c := NewCache(j, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
		c.Flights, c.Scope, c.Run, c.Private = flights, scope, run, private
		hits := new(int)
		c.OnHit = func(context.Context, Hit) { *hits++ }
		return c, hits
	}
	leader, leaderHits := newCache("1", 1, false)
	follower, followerHits := newCache("1", 2, false)
	got := make(chan Response, 2)
	go func() { r, _ := leader.Complete(context.Background(), req); got <- r }()
	for {
		j.mu.Lock()
		n := j.calls
		j.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go func() { r, _ := follower.Complete(context.Background(), req); got <- r }()
	time.Sleep(20 * time.Millisecond)
	close(j.gate)
	a, b := <-got, <-got
	if j.calls != 1 || a.Text() != "answer 1" || b.Text() != "answer 1" {
		t.Fatalf("judge called %d times, answers %q and %q; want one call shared", j.calls, a.Text(), b.Text())
	}
	if *leaderHits != 0 || *followerHits != 1 || a.PromptTokens+b.PromptTokens != 10 {
		t.Errorf("hits %d and %d, tokens %d and %d; want the follower's answer free and counted as cached",
			*leaderHits, *followerHits, a.PromptTokens, b.PromptTokens)
	}
	// Just after: still shared.
	late, lateHits := newCache("1", 3, false)
	if r, _ := late.Complete(context.Background(), req); r.Text() != "answer 1" || *lateHits != 1 || j.calls != 1 {
		t.Errorf("just after: %q, %d hits, %d calls; want the shared answer", r.Text(), *lateHits, j.calls)
	}
	// Another workspace, or a run that reuses nothing: its own call.
	other, _ := newCache("2", 4, false)
	if r, _ := other.Complete(context.Background(), req); r.Text() != "answer 2" {
		t.Errorf("another workspace got %q, want its own answer", r.Text())
	}
	private, _ := newCache("1", 5, true)
	if r, _ := private.Complete(context.Background(), req); r.Text() != "answer 3" {
		t.Errorf("a private cache got %q, want its own answer", r.Text())
	}
}

// TestRequestHashNamesTheWholeEndpoint: the base URL's query string is
// part of what a request is since the client sends it (Azure's
// api-version, which chooses the API the deployment answers with): a
// request to another api-version or deployment has another hash, so a
// cached answer is never served for a different endpoint.
func TestRequestHashNamesTheWholeEndpoint(t *testing.T) {
	r := simpleRequest()
	base := "https://res.openai.azure.com/openai/deployments/judge?api-version=2024-10-21"
	want, err := RequestHash(base, "gpt-4o", r)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{
		"https://res.openai.azure.com/openai/deployments/judge?api-version=2025-01-01-preview",
		"https://res.openai.azure.com/openai/deployments/judge",
		"https://res.openai.azure.com/openai/deployments/other?api-version=2024-10-21",
	} {
		if got, _ := RequestHash(other, "gpt-4o", r); got == want {
			t.Errorf("%s hashes as %s", other, base)
		}
	}
}

// failJudge fails every call with err.
type failJudge struct{ err error }

func (f failJudge) Complete(context.Context, Request) (Response, error) { return Response{}, f.err }

// TestCacheLogsFailedCallsThatWentOut: a call that failed after it was
// sent (an HTTP attempt was made: a judge error, a timeout, a billed
// answer that could not be read) is a paid call of its unit, with what
// the endpoint billed and an identity of its own; a call refused before
// it was sent (no attempt) is not (regression: only answered calls were
// logged, so a failed call of a unit cut short was never counted).
func TestCacheLogsFailedCallsThatWentOut(t *testing.T) {
	req := Request{Messages: []evaluator.Message{{Role: "user", Content: "rate these"}}}
	cases := []struct {
		name string
		err  error
		want []PaidCall // IDs not compared
	}{
		{"judge error", &Error{Kind: KindServer, Status: 500, Attempts: 3}, []PaidCall{{Failed: true}}},
		{"billed unreadable answer", &Error{Kind: KindMalformed, Attempts: 1, PromptTokens: 70, CompletionTokens: 3},
			[]PaidCall{{PromptTokens: 70, CompletionTokens: 3, Failed: true}}},
		{"timeout after sending", &Error{Kind: KindTimeout, Attempts: 1}, []PaidCall{{Failed: true}}},
		{"server error, then the retry refused before sending", &Error{Kind: KindCancelled, Attempts: 1, Message: "lease lost"}, []PaidCall{{Failed: true}}},
		{"refused before sending", &Error{Kind: KindCancelled, Message: "lease lost"}, nil},
		{"rate limited", &Error{Kind: KindRateLimited, Status: 429, Attempts: 1}, nil},
		{"abandoned on its way by a hard stop", &Error{Kind: KindCancelled, Attempts: 1}, nil},
		{"not a judge error", fmt.Errorf("spending cap reached"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(failJudge{tc.err}, &memStore{answers: map[AnswerKey][]byte{}}, "http://judge", "m")
			c.Run = 1
			log := &PaidLog{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if strings.HasPrefix(tc.name, "abandoned") {
				cancel() // the caller gave up on the call while it was out
			}
			if _, err := c.Complete(WithUnit(ctx, Unit{ID: 5, Uncounted: true, Paid: log}), req); err == nil {
				t.Fatal("a failing judge's call returned no error")
			}
			got := log.Calls()
			if len(got) != len(tc.want) {
				t.Fatalf("paid calls %+v, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].ID == "" || got[i].PromptTokens != w.PromptTokens || got[i].CompletionTokens != w.CompletionTokens || got[i].Failed != w.Failed || got[i].Replayed {
					t.Errorf("paid call %+v, want a failed call with an identity and %d+%d tokens", got[i], w.PromptTokens, w.CompletionTokens)
				}
			}
		})
	}
}

// countingFailJudge fails every call with err and counts them.
type countingFailJudge struct {
	err   error
	calls int
}

func (f *countingFailJudge) Complete(context.Context, Request) (Response, error) {
	f.calls++
	return Response{}, f.err
}

// TestCacheKeepsRefusalsOfProbes: a call marked KeepRefusal that the
// endpoint refuses (HTTP 4xx, bad request) stores the refusal, and an
// identical call of a later run is refused from the store, as a cached
// call, without reaching the endpoint (regression: G-Eval's logprobs
// probe was sent again by every identical re-run). Other failures, and
// refusals of calls not so marked, are not stored; the unit that was
// refused and never counted gets its refusal back as the call it was.
func TestCacheKeepsRefusalsOfProbes(t *testing.T) {
	req := Request{Messages: []evaluator.Message{{Role: "user", Content: "score this"}}, Logprobs: true, TopLogprobs: 5}
	refused := &Error{Kind: KindBadRequest, Status: 400, Attempts: 1, Message: "logprobs is not supported by this model"}
	cases := []struct {
		name string
		err  error
		keep bool
		// wantCalls is how many calls the endpoint sees in both runs.
		wantCalls int
	}{
		{"refusal of a probe is kept", refused, true, 1},
		{"refusal of a call not marked is not kept", refused, false, 2},
		{"server error of a probe is not kept", &Error{Kind: KindServer, Status: 500, Attempts: 3}, true, 2},
		{"rate limit of a probe is not kept", &Error{Kind: KindRateLimited, Status: 429, Attempts: 1}, true, 2},
		{"invalid request never sent is not kept", &Error{Kind: KindBadRequest, Message: "messages are empty"}, true, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{answers: map[AnswerKey][]byte{}}
			j := &countingFailJudge{err: tc.err}
			ctx := context.Background()
			if tc.keep {
				ctx = KeepRefusal(ctx)
			}
			hits := 0
			for run := int64(1); run <= 2; run++ {
				c := NewCache(j, store, "http://judge", "m")
				c.Run = run
				c.OnHit = func(context.Context, Hit) { hits++ }
				_, err := c.Complete(WithUnit(ctx, Unit{ID: 10 * run, Uncounted: true, Paid: &PaidLog{}}), req)
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.err.(*Error).Kind {
					t.Fatalf("run %d: error %v, want a %s error", run, err, tc.err.(*Error).Kind)
				}
				if run == 2 && tc.wantCalls == 1 {
					if !e.Cached || e.Attempts != 0 || e.Error() != refused.Error() || !CachedOf(err) {
						t.Errorf("the re-run's refusal %+v (%q): want it cached, with no attempt and the same words as %q", e, e.Error(), refused.Error())
					}
				}
			}
			if j.calls != tc.wantCalls {
				t.Errorf("the endpoint saw %d calls, want %d", j.calls, tc.wantCalls)
			}
			if wantHits := 2 - tc.wantCalls; hits != wantHits {
				t.Errorf("%d calls counted as cached, want %d", hits, wantHits)
			}
		})
	}
	t.Run("the refused unit's own refusal replays as its call", func(t *testing.T) {
		store := &memStore{answers: map[AnswerKey][]byte{}}
		j := &countingFailJudge{err: refused}
		ctx := KeepRefusal(context.Background())
		first := &PaidLog{}
		c := NewCache(j, store, "http://judge", "m")
		c.Run = 7
		_, _ = c.Complete(WithUnit(ctx, Unit{ID: 3, Uncounted: true, Paid: first}), req)
		// The execution crashed before the unit was stored: a resume
		// (a new Cache of the same run) replays the refusal as that call.
		again := &PaidLog{}
		c = NewCache(j, store, "http://judge", "m")
		c.Run = 7
		c.OnHit = func(context.Context, Hit) { t.Error("the unit's own uncounted refusal was counted as a cached call") }
		_, err := c.Complete(WithUnit(ctx, Unit{ID: 3, Uncounted: true, Paid: again}), req)
		if !Reached(err) || CachedOf(err) {
			t.Errorf("replayed refusal %+v: want it counted as the call that was sent", err)
		}
		if f, a := first.Calls(), again.Calls(); len(f) != 1 || len(a) != 1 || a[0].ID != f[0].ID || !a[0].Failed || !a[0].Replayed {
			t.Errorf("paid calls %+v then %+v: want the same failed call, replayed", f, a)
		}
		if j.calls != 1 {
			t.Errorf("the endpoint saw %d calls, want 1", j.calls)
		}
	})
}
