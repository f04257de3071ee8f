package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// TestRunSummaryLineRecomputed: `batcheval run` on the 125 FED dialogues
// (Coherent on the paper's 1 to 3, two rounds of batches of 10) against a
// priced judge that answers every fifth batch request with a server error
// first. Its summary line ("N judge calls, R judge retries, P prompt + C
// completion tokens, cost $X") is recomputed from what the judge itself
// saw and answered: the answered requests, the failed ones (each retried),
// the tokens its answers reported, and tokens × the prices given, to the
// micro-dollar.
func TestRunSummaryLineRecomputed(t *testing.T) {
	fed := sharedDataset(t, "fed-dialog.jsonl")
	inner := simjudge.NewHandler(simjudge.Options{Seed: 9})
	var mu sync.Mutex
	var answered, failed, prompt, completion, seen int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		probe := strings.Contains(string(body), "Reply with the single word OK")
		mu.Lock()
		if !probe {
			seen++
		}
		fail := !probe && seen%5 == 0
		if fail {
			failed++
		}
		mu.Unlock()
		if fail {
			http.Error(w, `{"error":{"message":"try again"}}`, http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		var ans struct {
			Usage struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &ans) == nil && !probe {
			mu.Lock()
			answered++
			prompt += ans.Usage.Prompt
			completion += ans.Usage.Completion
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()

	dir := t.TempDir()
	rubric := writeFile(t, filepath.Join(dir, "fed.yaml"), `task: a conversation between a user and a system
fields:
  - {column: context, label: Dialogue}
criteria:
  - name: Coherent
    description: Does the system keep the conversation coherent and flowing?
    lo: 1
    hi: 3
    levels: {low: incoherent, middle: partly coherent, high: coherent}
    human_column: scores.Coherent
`)
	getenv := func(k string) string {
		if k == "BATCHEVAL_JUDGE_ALLOW_LOOPBACK" {
			return "true"
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--data", fed, "--rubric", rubric, "--judge-url", srv.URL + "/v1", "--model", "m", "--prices", "m=3:15",
		"--rounds", "2", "--batch-size", "10", "--concurrency", "2", "--timeout", "10s", "--no-cache", "--db", filepath.Join(dir, "t.db")}
	if err := run(t.Context(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`run \d+: (\d+) judge calls, (\d+) judge retries, (\d+) prompt \+ (\d+) completion tokens, cost \$(\S+)\n`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no summary line:\n%s", stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if failed == 0 {
		t.Fatal("no request failed: the test needs retries")
	}
	// The cost to the micro-dollar, trailing zeros dropped, as the JSON
	// export writes it.
	cost := (3*float64(prompt) + 15*float64(completion)) / 1e6
	costText := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(cost, 'f', 6, 64), "0"), ".")
	want := []string{strconv.Itoa(answered), strconv.Itoa(failed), strconv.Itoa(prompt), strconv.Itoa(completion), costText}
	for i, w := range want {
		if m[i+1] != w {
			t.Errorf("summary line %q: field %d is %s, recomputed %s (answered %d, failed %d, tokens %d + %d)", strings.TrimSpace(m[0]), i+1, m[i+1], w,
				answered, failed, prompt, completion)
		}
	}
	t.Logf("%s", strings.TrimSpace(m[0]))
}
