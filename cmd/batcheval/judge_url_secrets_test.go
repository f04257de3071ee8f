package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestRunCommandRefusesCredentialsInJudgeURL: `batcheval run --judge-url`
// took a base URL holding a credential (a user name and password, a key in
// the query string or after #), which saving a judge refuses: the run was
// stored with it in its recorded judge, shown to every member. It is now
// refused before anything is stored or called, with the judge form's
// message, and the secret shows nowhere in the error or the output.
func TestRunCommandRefusesCredentialsInJudgeURL(t *testing.T) {
	const secret = "sk-cli-n0t-in-urls"
	sim := simjudge.NewHandler(simjudge.Options{Seed: 2})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sim.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	data, rubric := faultData(t, 5)
	getenv := func(k string) string {
		if k == "BATCHEVAL_JUDGE_ALLOW_LOOPBACK" {
			return "true"
		}
		return ""
	}
	for _, tc := range []struct{ name, url, want string }{
		{"user and password", "http://judge:" + secret + "@" + host + "/v1", "the base URL must not hold a user name or password"},
		{"key in the query", srv.URL + "/v1?api-version=1&api_key=" + secret, "the base URL must not hold a credential in its query string (api_key=…"},
		{"token after #", srv.URL + "/v1#access_token=" + secret, "the base URL must not hold a credential in its fragment (#access_token=…"},
		{"bare key after #", srv.URL + "/v1/chat/completions#" + secret, "the base URL must not have a fragment"},
		// Nothing in an address that does not parse can be told apart.
		{"unreadable", "http://judge:" + secret + " x@" + host + "/v1", "cannot be read as an address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", tc.url, "--model", "m",
				"--rounds", "1", "--batch-size", "5", "--db", filepath.Join(t.TempDir(), "t.db")}
			err := run(context.Background(), args, getenv, &stdout, &stderr)
			if err == nil || !strings.HasPrefix(err.Error(), "--judge-url: the base URL") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want it refused saying %q", err, tc.want)
			}
			for what, text := range map[string]string{"error": err.Error(), "stdout": stdout.String(), "stderr": stderr.String()} {
				if strings.Contains(text, secret) {
					t.Errorf("the %s shows the secret: %s", what, text)
				}
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the judge was called %d times with a refused address", n)
	}
}

// TestRunCommandShortensAPastedEndpoint: `batcheval run --judge-url` took
// a whole endpoint pasted (.../v1/chat/completions, with or without a
// query) as the base URL, and every call went to
// .../chat/completions/chat/completions and failed. It is now shortened as
// saving a judge shortens it, keeping the query (Azure's api-version),
// the run records the shortened address, and a note on stderr says so.
func TestRunCommandShortensAPastedEndpoint(t *testing.T) {
	sim := simjudge.NewHandler(simjudge.Options{Seed: 2})
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		sim.ServeHTTP(w, r)
	}))
	defer srv.Close()
	data, rubric := faultData(t, 5)
	for _, tc := range []struct{ name, typed, saved, suffix, query string }{
		{"plain", srv.URL + "/v1/chat/completions", srv.URL + "/v1", "/chat/completions", ""},
		{"with a query", srv.URL + "/v1/Chat/Completions/?api-version=2024-10-21", srv.URL + "/v1?api-version=2024-10-21", "/Chat/Completions", "?api-version=2024-10-21"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			paths = nil
			mu.Unlock()
			dbPath := filepath.Join(t.TempDir(), "t.db")
			var stdout, stderr bytes.Buffer
			args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", tc.typed, "--model", "m",
				"--rounds", "1", "--batch-size", "5", "--no-cache", "--db", dbPath}
			if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			note := "note: --judge-url ended in " + tc.suffix + ", which every call adds itself: it was shortened to " + tc.saved
			if !strings.Contains(stderr.String(), note) {
				t.Errorf("stderr lacks %q:\n%s", note, stderr.String())
			}
			mu.Lock()
			got := slices.Clone(paths)
			mu.Unlock()
			if len(got) == 0 {
				t.Fatal("the judge was never called")
			}
			for _, p := range got {
				if p != "POST /v1/chat/completions"+tc.query {
					t.Errorf("a call went to %s, want POST /v1/chat/completions%s", p, tc.query)
				}
			}
			db := openDSN(t, dbPath)
			var runs []models.Run
			if err := db.Gorm.Find(&runs).Error; err != nil || len(runs) != 1 {
				t.Fatalf("runs %d, err %v", len(runs), err)
			}
			if runs[0].JudgeSnapshot.BaseURL != tc.saved {
				t.Errorf("the run records base URL %q, want %q", runs[0].JudgeSnapshot.BaseURL, tc.saved)
			}
		})
	}
}
