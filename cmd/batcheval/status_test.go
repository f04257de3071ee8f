package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gevalEndpoint is a local OpenAI-compatible endpoint for G-Eval by
// sampling: it writes evaluation steps, and answers a form with "2" unless
// the sample's text holds "unreadable", which gets an answer without a
// score.
func gevalEndpoint(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			N int `json:"n"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		prompt := ""
		for _, m := range req.Messages {
			prompt += m.Content
		}
		text := "2"
		switch {
		case !strings.Contains(prompt, "Evaluation Form"):
			text = "Evaluation Steps:\n1. Read the text.\n2. Rate it."
		case strings.Contains(prompt, "unreadable"):
			text = "I would rather not say."
		}
		choices := []map[string]any{}
		for k := range max(1, req.N) {
			choices = append(choices, map[string]any{"index": k, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": time.Now().Unix(), "model": "fake",
			"choices": choices, "usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestRunOutputSaysFinishedWithGaps: `batcheval run` names a run with
// missing scores "finished with gaps" (and still prints its results), and
// fails a run in which no score could be read.
func TestRunOutputSaysFinishedWithGaps(t *testing.T) {
	url := gevalEndpoint(t)
	tests := []struct {
		name    string
		rows    string
		wantErr string // "" for no error
		wantOut string // on stderr
	}{
		{"some unreadable", "id,text,human\na,a fine text,2\nb,an unreadable text,1\nc,another fine text,3\n", "",
			"finished with gaps: 1 of 3 scores are missing"},
		{"all unreadable", "id,text,human\na,unreadable,2\nb,unreadable too,1\n", "failed: no score could be read", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data, rubric := filepath.Join(dir, "d.csv"), filepath.Join(dir, "r.yaml")
			if err := os.WriteFile(data, []byte(tt.rows), 0o644); err != nil {
				t.Fatal(err)
			}
			rub := "task: a short text\nfields:\n  - {column: text, label: Text}\ncriteria:\n  - name: Quality\n    lo: 1\n    hi: 3\n    human_column: human\n"
			if err := os.WriteFile(rubric, []byte(rub), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", url, "--model", "fake", "--method", "geval",
				"--no-logprobs", "--samples", "2", "--db", filepath.Join(dir, "t.db")}
			err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("run: %v\n%s", err, stderr.String())
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
			if !strings.Contains(stderr.String(), tt.wantOut) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantOut, stderr.String())
			}
			for _, line := range strings.Split(stderr.String()+stdout.String(), "\n") {
				if strings.Contains(line, "finished_with_gaps") && !strings.HasPrefix(line, "time=") { // log lines keep the stored name
					t.Errorf("the output shows the stored status name instead of words: %s", line)
				}
			}
			if tt.wantErr == "" && !strings.Contains(stderr.String(), "samples 3/3") {
				t.Errorf("progress does not count G-Eval's units as samples:\n%s", stderr.String())
			}
		})
	}
}
