package handlers

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPIStreamsPerTokenBounded: one token holds at most
// maxStreamsPerHolder progress streams open at once; the next is
// refused 429 with Retry-After, another token is not held back, and a
// stream closed by its client frees its place. Before, the rate limit
// counted a stream once, when it opened: a token sending its 600 requests
// a minute as streams of a running run held them all open, each reading
// the run twice a second, for as long as the run went on.
func TestAPIStreamsPerTokenBounded(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	a := newAPIClient(t, env)
	viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
	_, tok := env.apiToken(env.ws.ID, viewer.ID)
	_, other := env.apiToken(env.ws.ID, viewer.ID)
	held := heldRun(t, env, a)

	srv := httptest.NewServer(env.e)
	defer srv.Close()
	client := &http.Client{Timeout: 30 * time.Second}
	open := func(token string) (*http.Response, context.CancelFunc) {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, fmt.Sprintf("%s/api/v1/runs/%d/events", srv.URL, held), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			// The stream is open once its first event came.
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "event: run\n" {
				t.Fatalf("first line %q %v", line, err)
			}
		}
		return resp, cancel
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := range maxStreamsPerHolder {
		resp, cancel := open(tok)
		cancels = append(cancels, cancel)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d = %d", i+1, resp.StatusCode)
		}
	}
	resp, cancel := open(tok)
	cancel()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("stream %d of one token = %d (Retry-After %q), want 429 with Retry-After", maxStreamsPerHolder+1, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp, cancel = open(other)
	cancels = append(cancels, cancel)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another token's stream = %d", resp.StatusCode)
	}
	// One closed by its client: its place is free again.
	cancels[0]()
	waitFor(t, 10*time.Second, "a closed stream's place freed", func() bool {
		resp, cancel := open(tok)
		if resp.StatusCode == http.StatusOK {
			cancels = append(cancels, cancel)
			return true
		}
		cancel()
		return false
	})
}

// heldRun launches a run of the demo project whose judge holds every call
// until the test ends, and returns it once it called: a run that stays
// running, whose progress streams stay open. It is cancelled at the end.
func heldRun(t *testing.T, env *testEnv, a *apiClient) int64 {
	t.Helper()
	editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
	_, edTok := env.apiToken(env.ws.ID, editor.ID)
	return heldRunAs(t, env, a, edTok)
}

// heldRunAs is heldRun launched with token (none: as the local user of a
// loopback server with no accounts).
func heldRunAs(t *testing.T, env *testEnv, a *apiClient, edTok string) int64 {
	t.Helper()
	ctx := context.Background()
	d := env.demo()

	inner := simjudge.NewHandler(simjudge.Options{Seed: 3})
	var calls atomic.Int32
	release := make(chan struct{})
	judgeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			calls.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(judgeSrv.Close)
	t.Cleanup(func() { close(release) })
	j := models.Judge{WorkspaceID: env.ws.ID, Name: "held", BaseURL: judgeSrv.URL + "/v1", Model: "m", TimeoutSeconds: 60,
		Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
	if err := env.db.SaveJudge(ctx, &j); err != nil {
		t.Fatal(err)
	}
	held := decode[APIRun](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), edTok, map[string]any{
		"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": j.ID, "settings": map[string]any{"rounds": 1, "batch_size": 10}}),
		http.StatusCreated).ID
	t.Cleanup(func() { _, _ = env.runner.Cancel(ctx, env.ws.ID, held) })
	waitFor(t, 30*time.Second, "the run calling its judge", func() bool { return calls.Load() > 0 })
	return held
}
