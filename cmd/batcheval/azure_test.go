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

// TestRunCommandOnAzureDeployment: `batcheval run --key-header api-key`
// judges through Azure OpenAI's per-deployment address (?api-version= in
// --judge-url, the key in the api-key header), which refuses any call
// without both. A --key-header that is neither mode is refused first.
func TestRunCommandOnAzureDeployment(t *testing.T) {
	const key, version = "az-cli-s3cret", "2024-10-21"
	sim := simjudge.NewHandler(simjudge.Options{Seed: 5})
	var answered, refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openai/deployments/judge/chat/completions" || r.URL.Query().Get("api-version") != version ||
			r.Header.Get("api-key") != key || r.Header.Get("Authorization") != "" {
			refused.Add(1)
			http.Error(w, `{"error":{"code":"401","message":"Access denied"}}`, http.StatusUnauthorized)
			return
		}
		answered.Add(1)
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawQuery = "/v1/chat/completions", ""
		sim.ServeHTTP(w, r2)
	}))
	defer srv.Close()
	data, rubric := faultData(t, 10)
	getenv := func(k string) string {
		switch k {
		case "BATCHEVAL_JUDGE_ALLOW_LOOPBACK":
			return "true"
		case "AZURE_OPENAI_API_KEY":
			return key
		}
		return ""
	}
	args := func(keyHeader string) []string {
		return []string{"run", "--data", data, "--rubric", rubric, "--judge-url", srv.URL + "/openai/deployments/judge?api-version=" + version,
			"--model", "gpt-4o", "--api-key-env", "AZURE_OPENAI_API_KEY", "--key-header", keyHeader,
			"--rounds", "1", "--batch-size", "5", "--db", filepath.Join(t.TempDir(), "t.db")}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args("x-api-key"), getenv, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--key-header") {
		t.Errorf("--key-header x-api-key: %v, want it refused", err)
	}
	if err := run(context.Background(), args("api-key"), getenv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if answered.Load() == 0 || refused.Load() != 0 {
		t.Errorf("Azure answered %d calls and refused %d, want every call answered", answered.Load(), refused.Load())
	}
}
