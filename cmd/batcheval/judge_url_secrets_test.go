package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/evaluator/simjudge"
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
