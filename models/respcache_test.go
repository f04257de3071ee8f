package models_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
			c.OnHit = func(context.Context) { *hits++ }
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
