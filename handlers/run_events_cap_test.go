package handlers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPageStreamsPerAccountBounded: one signed-in account holds at most
// maxStreamsPerHolder of the run page's progress streams open at once,
// over all its sessions (a new sign-in is no way around it); the next is
// refused 429 with Retry-After, another account is not held back, a
// stream closed by its browser frees its place, and the run page itself
// still loads (app.js then refreshes its figures without a stream). Before,
// each GET /runs/{id}/events with the session cookie opened one more
// stream reading the run twice a second, with no bound (streams skip the
// page gate).
func TestPageStreamsPerAccountBounded(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	held := heldRun(t, env, newAPIClient(t, env))
	viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
	other := env.createUser(env.ws.ID, "other@a.test", models.RoleViewer)
	sessions := []*http.Cookie{env.sessionCookie(viewer), env.sessionCookie(viewer)}

	srv := httptest.NewServer(env.e)
	defer srv.Close()
	client := &http.Client{Timeout: 30 * time.Second}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	get := func(path string, session *http.Cookie) (*http.Response, context.CancelFunc) {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, srv.URL+path, nil)
		req.AddCookie(session)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, cancel
	}
	events := fmt.Sprintf("/runs/%d/events", held)
	open := func(session *http.Cookie) (*http.Response, context.CancelFunc) {
		t.Helper()
		resp, cancel := get(events, session)
		if resp.StatusCode == http.StatusOK {
			// The stream is open once its first event came.
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "event: progress\n" {
				t.Fatalf("first line %q %v", line, err)
			}
		}
		return resp, cancel
	}
	for i := range maxStreamsPerHolder {
		resp, cancel := open(sessions[i%2])
		cancels = append(cancels, cancel)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d = %d", i+1, resp.StatusCode)
		}
	}
	for _, session := range []*http.Cookie{sessions[0], env.sessionCookie(viewer)} {
		resp, cancel := open(session)
		cancel()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("stream %d of one account = %d (Retry-After %q), want 429 with Retry-After", maxStreamsPerHolder+1, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	// The page still loads, with its stream's address for app.js.
	resp, cancel := get(fmt.Sprintf("/runs/%d", held), sessions[0])
	body, _ := io.ReadAll(resp.Body)
	cancel()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-run-events="`+events+`"`) {
		t.Fatalf("the run page with its account's streams all open = %d", resp.StatusCode)
	}
	resp, cancel = open(env.sessionCookie(other))
	cancels = append(cancels, cancel)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another account's stream = %d", resp.StatusCode)
	}
	// One closed by its browser: its place is free again.
	cancels[0]()
	waitFor(t, 10*time.Second, "a closed stream's place freed", func() bool {
		resp, cancel := open(sessions[1])
		if resp.StatusCode == http.StatusOK {
			cancels = append(cancels, cancel)
			return true
		}
		cancel()
		return false
	})
}

// TestLocalUserStreamsBounded: the local user of a loopback server with
// no accounts holds at most maxStreamsPerHolder progress streams open at
// once, its run pages' and its API streams counted together; the next of
// either is refused 429 with Retry-After and a message for the local user,
// the run page still loads (app.js then refreshes its figures without a
// stream), and a stream closed frees its place. Before, the local user was
// not counted: a local tab or script could open streams without bound,
// each reading the run twice a second.
func TestLocalUserStreamsBounded(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	ctx := context.Background()
	held := heldRunAs(t, env, newAPIClient(t, env), "")

	srv := httptest.NewServer(env.e)
	defer srv.Close()
	client := &http.Client{Timeout: 30 * time.Second}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	get := func(path string) (*http.Response, context.CancelFunc) {
		t.Helper()
		rctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, srv.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, cancel
	}
	streams := []struct{ path, first string }{
		{fmt.Sprintf("/runs/%d/events", held), "event: progress\n"},
		{fmt.Sprintf("/api/v1/runs/%d/events", held), "event: run\n"},
	}
	open := func(i int) (*http.Response, context.CancelFunc) {
		t.Helper()
		s := streams[i%len(streams)]
		resp, cancel := get(s.path)
		if resp.StatusCode == http.StatusOK {
			// The stream is open once its first event came.
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != s.first {
				t.Fatalf("%s: first line %q %v", s.path, line, err)
			}
		}
		return resp, cancel
	}
	for i := range maxStreamsPerHolder {
		resp, cancel := open(i)
		cancels = append(cancels, cancel)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d = %d", i+1, resp.StatusCode)
		}
	}
	for i := range streams {
		resp, cancel := open(i)
		body, _ := io.ReadAll(resp.Body)
		cancel()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: stream %d of the local user = %d (Retry-After %q), want 429 with Retry-After",
				streams[i].path, maxStreamsPerHolder+1, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(body), "local user already has 10 live progress streams open") {
			t.Errorf("%s: the refusal does not say why: %s", streams[i].path, body)
		}
	}
	// The page still loads, with its stream's address for app.js.
	resp, cancel := get(fmt.Sprintf("/runs/%d", held))
	body, _ := io.ReadAll(resp.Body)
	cancel()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-run-events="`+streams[0].path+`"`) {
		t.Fatalf("the run page with the local user's streams all open = %d", resp.StatusCode)
	}
	// One closed by its browser: its place is free again.
	cancels[0]()
	waitFor(t, 10*time.Second, "a closed stream's place freed", func() bool {
		resp, cancel := open(0)
		if resp.StatusCode == http.StatusOK {
			cancels = append(cancels, cancel)
			return true
		}
		cancel()
		return false
	})
}
