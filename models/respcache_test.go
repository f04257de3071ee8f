package models_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestResponseCache drives the judge answer cache (judge.Cache over the
// workspace's ResponseCache) against an endpoint that counts its requests
// and numbers its answers, on both databases.
func TestResponseCache(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		var requests atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n := requests.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m-served","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"answer %d"}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, n)
		}))
		t.Cleanup(srv.Close)
		client, err := judge.New(judge.Config{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client(), MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		ws1, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws2 := models.Workspace{Slug: "other", Name: "Other", CreatedAt: time.Now().UTC()}
		if err := db.Gorm.Create(&ws2).Error; err != nil {
			t.Fatal(err)
		}
		seed := func(v int64) *int64 { return &v }
		req := func(s int64) judge.Request {
			return judge.Request{Messages: []evaluator.Message{{Role: "user", Content: "rate this"}}, Temperature: 0.2, Seed: seed(s)}
		}
		newCache := func(ws int64, hits *int) *judge.Cache {
			c := judge.NewCache(client, db.ResponseCache(ws), srv.URL+"/v1", "m")
			c.OnHit = func(context.Context, judge.Hit) { *hits++ }
			return c
		}

		// First run: the same request twice is two calls (the second is a
		// retry that needs a fresh answer), each answer stored.
		var hits1 int
		first := newCache(ws1.ID, &hits1)
		var texts []string
		for range 2 {
			resp, err := first.Complete(ctx, req(1))
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, resp.Text())
			if resp.PromptTokens != 7 || resp.Attempts != 1 {
				t.Errorf("a real call reports %d prompt tokens, %d attempts; want 7 and 1", resp.PromptTokens, resp.Attempts)
			}
		}
		if requests.Load() != 2 || hits1 != 0 || texts[0] == texts[1] {
			t.Fatalf("first run: %d requests, %d hits, answers %q; want 2, 0 and two different answers", requests.Load(), hits1, texts)
		}

		tests := []struct {
			name      string
			ws        int64
			seed      int64
			wantHits  int
			wantCalls int64
			wantTexts []string
		}{
			{"same workspace replays both answers in order", ws1.ID, 1, 2, 0, texts},
			{"another seed is another request", ws1.ID, 2, 0, 2, nil},
			{"another workspace never sees them", ws2.ID, 1, 0, 2, nil},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := requests.Load()
				var hits int
				c := newCache(tc.ws, &hits)
				var got []string
				for range 2 {
					resp, err := c.Complete(ctx, req(tc.seed))
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, resp.Text())
					if hits > 0 && (resp.PromptTokens != 0 || resp.CompletionTokens != 0 || resp.Attempts != 0) {
						t.Errorf("a cached answer reports %d/%d tokens and %d attempts; want none", resp.PromptTokens, resp.CompletionTokens, resp.Attempts)
					}
				}
				if calls := requests.Load() - before; calls != tc.wantCalls || hits != tc.wantHits {
					t.Errorf("%d requests, %d hits; want %d and %d", calls, hits, tc.wantCalls, tc.wantHits)
				}
				if tc.wantTexts != nil && fmt.Sprint(got) != fmt.Sprint(tc.wantTexts) {
					t.Errorf("answers %q, want %q", got, tc.wantTexts)
				}
			})
		}
	})
}

// countingLoader counts the lookup queries a Cache makes, holding the
// first one for a moment so that the calls started with it queue behind.
type countingLoader struct {
	*models.ResponseCache
	queries atomic.Int64
	hold    time.Duration
}

func (c *countingLoader) LoadAnswers(ctx context.Context, keys []judge.AnswerKey) (map[judge.AnswerKey][]byte, error) {
	if c.queries.Add(1) == 1 {
		time.Sleep(c.hold)
	}
	return c.ResponseCache.LoadAnswers(ctx, keys)
}

// TestResponseCacheLookupsTogether: lookups are made several keys at a
// time (LoadAnswers), and calls that start together share queries; every
// call with a stored answer (its hash and its occurrence) is served from
// it, in its own workspace only, and every other call goes to the judge.
func TestResponseCacheLookupsTogether(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws1, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws2 := models.Workspace{Slug: "other", Name: "Other", CreatedAt: time.Now().UTC()}
		if err := db.Gorm.Create(&ws2).Error; err != nil {
			t.Fatal(err)
		}
		store := db.ResponseCache(ws1.ID)
		k := func(h string, occ int) judge.AnswerKey { return judge.AnswerKey{Hash: h, Occurrence: occ} }
		for _, key := range []judge.AnswerKey{k("a", 0), k("a", 1), k("c", 0), k("d", 1)} {
			if err := store.SaveAnswer(ctx, key.Hash, key.Occurrence, []byte(key.Hash+fmt.Sprint(key.Occurrence))); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.ResponseCache(ws2.ID).SaveAnswer(ctx, "b", 0, []byte("other workspace")); err != nil {
			t.Fatal(err)
		}
		lookups := []struct {
			name string
			ws   int64
			keys []judge.AnswerKey
			want map[judge.AnswerKey]string
		}{
			{"stored keys found, others missed", ws1.ID, []judge.AnswerKey{k("a", 0), k("b", 0), k("c", 0), k("d", 0), k("a", 1), k("a", 0)},
				map[judge.AnswerKey]string{k("a", 0): "a0", k("c", 0): "c0", k("a", 1): "a1"}},
			{"another workspace's answer is never found", ws1.ID, []judge.AnswerKey{k("b", 0)}, map[judge.AnswerKey]string{}},
			{"nothing asked", ws1.ID, nil, map[judge.AnswerKey]string{}},
			{"its own workspace finds it", ws2.ID, []judge.AnswerKey{k("b", 0), k("a", 0)}, map[judge.AnswerKey]string{k("b", 0): "other workspace"}},
		}
		for _, tc := range lookups {
			t.Run(tc.name, func(t *testing.T) {
				got, err := db.ResponseCache(tc.ws).LoadAnswers(ctx, tc.keys)
				if err != nil {
					t.Fatal(err)
				}
				texts := map[judge.AnswerKey]string{}
				for key, b := range got {
					texts[key] = string(b)
				}
				if fmt.Sprint(texts) != fmt.Sprint(tc.want) {
					t.Errorf("LoadAnswers = %v, want %v", texts, tc.want)
				}
			})
		}

		// Through the cache: 40 calls at once, the even seeds answered by
		// an earlier run.
		var requests atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n := requests.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"answer %d"}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, n)
		}))
		t.Cleanup(srv.Close)
		client, err := judge.New(judge.Config{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client(), MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		req := func(s int64) judge.Request {
			return judge.Request{Messages: []evaluator.Message{{Role: "user", Content: "rate this"}}, Seed: &s}
		}
		const calls = 40
		earlier := judge.NewCache(client, db.ResponseCache(ws1.ID), srv.URL+"/v1", "m")
		first := map[int64]string{}
		for s := int64(0); s < calls; s += 2 {
			resp, err := earlier.Complete(ctx, req(s))
			if err != nil {
				t.Fatal(err)
			}
			first[s] = resp.Text()
		}
		before := requests.Load()
		loader := &countingLoader{ResponseCache: db.ResponseCache(ws1.ID), hold: 300 * time.Millisecond}
		c := judge.NewCache(client, loader, srv.URL+"/v1", "m")
		var hits atomic.Int64
		c.OnHit = func(context.Context, judge.Hit) { hits.Add(1) }
		got := make([]string, calls)
		var wg sync.WaitGroup
		for s := range int64(calls) {
			wg.Go(func() {
				resp, err := c.Complete(ctx, req(s))
				if err != nil {
					t.Error(err)
					return
				}
				got[s] = resp.Text()
			})
		}
		wg.Wait()
		if n := requests.Load() - before; n != calls/2 || hits.Load() != calls/2 {
			t.Errorf("%d requests and %d hits, want %d of each", n, hits.Load(), calls/2)
		}
		for s := int64(0); s < calls; s += 2 {
			if got[s] != first[s] {
				t.Errorf("seed %d answered %q, want the stored %q", s, got[s], first[s])
			}
		}
		// The first call's query, then one for the 39 that queued behind it
		// (a third at most, on a machine too busy to start them all in 300 ms).
		if q := loader.queries.Load(); q > 3 {
			t.Errorf("%d lookup queries for %d calls started together, want at most 3", q, calls)
		}
	})
}
