package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// TestRunFlagsForReasoningModels: `batcheval run` against an OpenAI
// reasoning model (simjudge.ReasoningModel: 400 for max_tokens, for a
// temperature or top_p but the default, for logprobs). Without flags for
// the judge form's two settings the command could not judge with one: every
// call was refused. --token-limit max_completion_tokens and
// --default-sampling-only send the cap under that name, 25,000 tokens
// higher, and no temperature nor top_p; words that are neither name, and a
// temperature the judge cannot take, are refused by flag before anything
// is sent.
func TestRunFlagsForReasoningModels(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]json.RawMessage
	inner := simjudge.ReasoningModel(simjudge.NewHandler(simjudge.Options{Seed: 5}), simjudge.Reasoning{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	data, rubric := faultData(t, 6)
	getenv := func(k string) string {
		if k == "BATCHEVAL_JUDGE_ALLOW_LOOPBACK" {
			return "true"
		}
		return ""
	}
	reasoning := []string{"--token-limit", "max_completion_tokens", "--default-sampling-only"}
	tests := []struct {
		name  string
		extra []string
		// wantErr is part of the error; "" means the run finishes.
		wantErr string
		// cap is the max_completion_tokens some call must send; 0: none.
		cap int
	}{
		{"no flags: refused by the model", nil, "Only the default (1) value is supported", 0},
		{"batcheval with both flags", reasoning, "", 0},
		{"geval's 5-token answers get the reasoning's room", append([]string{"--method", "geval", "--no-logprobs", "--samples", "2"}, reasoning...), "", 5 + judge.ReasoningAllowance},
		{"flags in another case", []string{"--token-limit", "MAX_COMPLETION_TOKENS", "--default-sampling-only"}, "", 0},
		{"an unknown token limit", []string{"--token-limit", "max_output_tokens"}, "--token-limit", 0},
		{"a temperature the judge cannot take", append([]string{"--temperature", "0.2"}, reasoning...), "--temperature", 0},
		{"a top_p the judge cannot take", append([]string{"--top-p", "0.9"}, reasoning...), "--top-p", 0},
		{"temperature 1 is the default", append([]string{"--temperature", "1"}, reasoning...), "", 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			bodies = nil
			mu.Unlock()
			args := append([]string{"run", "--data", data, "--rubric", rubric, "--judge-url", srv.URL + "/v1", "--model", "o4-mini",
				"--rounds", "1", "--batch-size", "3", "--db", filepath.Join(t.TempDir(), strconv.Itoa(i)+".db")}, tt.extra...)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, getenv, &stdout, &stderr)
			mu.Lock()
			got := append([]map[string]json.RawMessage(nil), bodies...)
			mu.Unlock()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tt.wantErr)
				}
				if strings.HasPrefix(tt.wantErr, "--") && len(got) != 0 {
					t.Errorf("a refused flag still sent %d calls", len(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			if len(got) == 0 {
				t.Fatal("no call reached the judge")
			}
			sawCap := false
			for _, b := range got {
				for _, refused := range []string{"max_tokens", "temperature", "top_p", "logprobs"} {
					if v, ok := b[refused]; ok {
						t.Errorf("a call sent %s = %s", refused, v)
					}
				}
				if v, ok := b["max_completion_tokens"]; ok && string(v) == strconv.Itoa(tt.cap) {
					sawCap = true
				}
			}
			if tt.cap > 0 && !sawCap {
				t.Errorf("no call sent max_completion_tokens %d", tt.cap)
			}
		})
	}
}

// TestRunRefusalsNameTheFlags: a `batcheval run` refused by a reasoning
// model (simjudge.ReasoningModel) says which of its own flags to use:
// there is no judge page nor Test connection button on the command line,
// which the error named before. --reasoning-effort is sent as
// reasoning_effort (none without it), an unknown word is refused by flag
// before any call, and a model that refuses reasoning_effort gets an error
// saying to run again without the flag.
func TestRunRefusalsNameTheFlags(t *testing.T) {
	reasoning := []string{"--token-limit", "max_completion_tokens", "--default-sampling-only"}
	tests := []struct {
		name    string
		opts    simjudge.Reasoning
		extra   []string
		want    []string // in the error; none: the run finishes
		not     string   // never in the error
		effort  string   // the reasoning_effort every call sends; "": none
		noCalls bool
	}{
		// BatchEval's calls send no cap: G-Eval's 5-token ones do.
		{"max_tokens refused", simjudge.Reasoning{}, []string{"--method", "geval", "--no-logprobs", "--samples", "2", "--default-sampling-only"},
			[]string{"'max_tokens'", "run again with --token-limit max_completion_tokens"}, "Test connection", "", false},
		{"temperature refused", simjudge.Reasoning{}, []string{"--token-limit", "max_completion_tokens"},
			[]string{"'temperature'", "run again with --default-sampling-only"}, "Test connection", "", false},
		{"reasoning_effort refused", simjudge.Reasoning{NoReasoningEffort: true}, append([]string{"--reasoning-effort", "high"}, reasoning...),
			[]string{"'reasoning_effort'", "run again without --reasoning-effort"}, "judge's page", "", false},
		{"an effort the flag does not know", simjudge.Reasoning{}, append([]string{"--reasoning-effort", "minimal"}, reasoning...),
			[]string{"--reasoning-effort", "low, medium or high"}, "", "", true},
		{"reasoning_effort sent", simjudge.Reasoning{}, append([]string{"--reasoning-effort", "Low"}, reasoning...), nil, "", `"low"`, false},
		{"no effort: none sent", simjudge.Reasoning{}, reasoning, nil, "", "", false},
	}
	getenv := func(k string) string {
		if k == "BATCHEVAL_JUDGE_ALLOW_LOOPBACK" {
			return "true"
		}
		return ""
	}
	data, rubric := faultData(t, 6)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []map[string]json.RawMessage
			inner := simjudge.ReasoningModel(simjudge.NewHandler(simjudge.Options{Seed: 5}), tt.opts)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, _ := io.ReadAll(r.Body)
				var body map[string]json.RawMessage
				_ = json.Unmarshal(raw, &body)
				mu.Lock()
				bodies = append(bodies, body)
				mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(raw))
				inner.ServeHTTP(w, r)
			}))
			defer srv.Close()
			args := append([]string{"run", "--data", data, "--rubric", rubric, "--judge-url", srv.URL + "/v1", "--model", "o4-mini",
				"--rounds", "1", "--batch-size", "3", "--db", filepath.Join(t.TempDir(), strconv.Itoa(i)+".db")}, tt.extra...)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, getenv, &stdout, &stderr)
			mu.Lock()
			got := append([]map[string]json.RawMessage(nil), bodies...)
			mu.Unlock()
			if len(tt.want) > 0 {
				if err == nil {
					t.Fatalf("the run finished, want an error naming %q", tt.want)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("the error lacks %q: %v", w, err)
					}
				}
				if tt.not != "" && strings.Contains(err.Error(), tt.not) {
					t.Errorf("the error names %q, which the command line has not: %v", tt.not, err)
				}
				if tt.noCalls && len(got) != 0 {
					t.Errorf("a refused flag still sent %d calls", len(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			if len(got) == 0 {
				t.Fatal("no call reached the judge")
			}
			for _, b := range got {
				v, sent := b["reasoning_effort"]
				if (tt.effort == "" && sent) || (tt.effort != "" && string(v) != tt.effort) {
					t.Errorf("a call sent reasoning_effort %s (sent %v), want %q", v, sent, tt.effort)
				}
			}
		})
	}
}
