package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// formEndpoint is a local OpenAI-compatible endpoint for G-Eval: it writes
// evaluation steps, answers form requests with log-probabilities the way a
// test case says, and answers sampled form requests with n copies of one
// score. It counts requests by kind.
type formEndpoint struct {
	t   *testing.T
	srv *httptest.Server
	// logprobs answers a form request that asks for logprobs; it returns
	// the HTTP status (0 for 200), the generated tokens and their
	// alternatives. i numbers the logprobs requests from 0.
	logprobs func(i int) (status int, content []map[string]any)
	// sampled is the text of each sampled completion.
	sampled string
	// stepsText, when set, answers the steps request instead of a
	// readable list of steps.
	stepsText string

	mu               sync.Mutex
	steps, lp, plain int
}

func newFormEndpoint(t *testing.T, sampled string, logprobs func(i int) (int, []map[string]any)) *formEndpoint {
	fe := &formEndpoint{t: t, sampled: sampled, logprobs: logprobs}
	fe.srv = httptest.NewServer(http.HandlerFunc(fe.serve))
	t.Cleanup(fe.srv.Close)
	return fe
}

func (fe *formEndpoint) URL() string { return fe.srv.URL + "/v1" }

func (fe *formEndpoint) counts() (steps, logprobs, plain int) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return fe.steps, fe.lp, fe.plain
}

func (fe *formEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		N        int  `json:"n"`
		Logprobs bool `json:"logprobs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt := ""
	for _, m := range req.Messages {
		prompt += m.Content
	}
	fe.mu.Lock()
	switch {
	case !strings.Contains(prompt, "Evaluation Form"):
		fe.steps++
		fe.mu.Unlock()
		steps := "Evaluation Steps:\n1. Read the response.\n2. Rate it."
		if fe.stepsText != "" {
			steps = fe.stepsText
		}
		writeChoices(w, []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": steps}}})
		return
	case req.Logprobs:
		i := fe.lp
		fe.lp++
		fe.mu.Unlock()
		status, content := fe.logprobs(i)
		if status != 0 {
			writeAPIError(w, status, nil, "logprobs are not supported by this model")
			return
		}
		text := ""
		for _, c := range content {
			text += c["token"].(string)
		}
		writeChoices(w, []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}, "logprobs": map[string]any{"content": content}}})
		return
	default:
		fe.plain++
		fe.mu.Unlock()
	}
	n := max(1, req.N)
	choices := make([]map[string]any, n)
	for k := range choices {
		choices[k] = map[string]any{"index": k, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": fe.sampled}}
	}
	writeChoices(w, choices)
}

func writeChoices(w http.ResponseWriter, choices []map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-form", "object": "chat.completion", "created": time.Now().Unix(),
		"model": "fake-judge", "choices": choices, "usage": map[string]int{"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}})
}

// tok is one generated token with its alternatives (token, probability
// pairs); a nil alts gives "top_logprobs": [].
func tok(token string, p float64, alts ...any) map[string]any {
	top := []map[string]any{}
	for i := 0; i+1 < len(alts); i += 2 {
		top = append(top, map[string]any{"token": alts[i], "logprob": math.Log(alts[i+1].(float64)), "bytes": nil})
	}
	return map[string]any{"token": token, "logprob": math.Log(p), "bytes": nil, "top_logprobs": top}
}

// launchGEval runs G-Eval with logprobs on the demo data against url, four
// calls at a time, and waits for it to finish. With learned, the run is
// stored as a resumed run would be, knowing that much already.
func (env *testEnv) launchGEval(url string, learned map[string]string) models.Run {
	env.t.Helper()
	run := env.newRun(url, 1, 4, 10)
	run.Method = string(evaluator.MethodGEval)
	run.MethodSettings = evaluator.MethodSettings{Samples: 5, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
	run = env.launch(env.jobs, run) // queued; no worker yet
	if learned != nil {
		run.MethodSettings.Learned = learned
		if err := env.db.UpdateRunMethodSettings(context.Background(), run.ID, run.MethodSettings); err != nil {
			env.t.Fatal(err)
		}
	}
	env.startRunner(Config{})
	return env.waitFinished(run.ID, 60*time.Second)
}

// TestGEvalLogprobsEdgeCases: the G-Eval defects found by trying the
// product, each against a local endpoint that behaves as a real one did.
func TestGEvalLogprobsEdgeCases(t *testing.T) {
	const rows = 30
	cases := []struct {
		name     string
		logprobs func(i int) (int, []map[string]any)
		// wantLP and wantPlain are the logprobs and sampled form requests.
		wantLP, wantPlain int
		wantSource        string
		wantScore         float64
		wantDetail        string // a Details key every batch must have
		wantLearned       string // what the run records about logprobs
		// learned is what the run knows before it starts, as a resumed
		// run does from its method settings.
		learned map[string]string
	}{
		{
			// Regression: every sample went missing and the run "succeeded".
			name:     "HTTP 400 to logprobs falls back to sampling, decided once",
			logprobs: func(int) (int, []map[string]any) { return http.StatusBadRequest, nil },
			wantLP:   1, wantPlain: rows, wantSource: evaluator.GEvalSourceSamples, wantScore: 2, wantDetail: "logprobs_unavailable", wantLearned: "absent",
		},
		{
			name:     "a resumed run that learned there are no logprobs does not ask again",
			logprobs: func(int) (int, []map[string]any) { return http.StatusBadRequest, nil },
			learned:  map[string]string{"geval_logprobs": "absent"},
			wantLP:   0, wantPlain: rows, wantSource: evaluator.GEvalSourceSamples, wantScore: 2, wantDetail: "logprobs_unavailable", wantLearned: "absent",
		},
		{
			// Regression: top_logprobs: [] became greedy scoring labelled
			// "logprobs".
			name:     "empty top_logprobs counts as no logprobs, decided once",
			logprobs: func(int) (int, []map[string]any) { return 0, []map[string]any{tok("3", 1)} },
			wantLP:   1, wantPlain: rows, wantSource: evaluator.GEvalSourceSamples, wantScore: 2, wantDetail: "logprobs_unavailable", wantLearned: "absent",
		},
		{
			// Regression: "Score: 4" on 1-3 was read from the "Score"
			// token's alternatives (2.0 with p = 1).
			name: "out-of-range generated score with little mass on allowed scores is sampled",
			logprobs: func(int) (int, []map[string]any) {
				return 0, []map[string]any{tok("Score", 0.9, "Score", 0.9, "2", 0.1), tok(":", 1, ":", 1.0), tok(" 4", 0.8, " 4", 0.8, " 3", 0.1, " 1", 0.1)}
			},
			wantLP: rows, wantPlain: rows, wantSource: evaluator.GEvalSourceSamples, wantScore: 2, wantDetail: "logprobs_unreadable", wantLearned: "available",
		},
		{
			name: "out-of-range generated score with most mass on allowed scores is read at its own position",
			logprobs: func(int) (int, []map[string]any) {
				return 0, []map[string]any{tok("Score", 0.9, "Score", 0.9, "1", 0.1), tok(" 4", 0.2, " 3", 0.6, " 4", 0.2, " 1", 0.2)}
			},
			wantLP: rows, wantPlain: 0, wantSource: evaluator.GEvalSourceLogprobs, wantScore: 2.5, wantDetail: "logprob_mass", wantLearned: "available",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fe := newFormEndpoint(t, "2", tc.logprobs)
				run := env.launchGEval(fe.URL(), tc.learned)
				if run.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s), want succeeded", run.Status, run.Error)
				}
				if got := run.MethodSettings.Learned["geval_logprobs"]; got != tc.wantLearned {
					t.Errorf("the run records logprobs %q, want %q", got, tc.wantLearned)
				}
				steps, lp, plain := fe.counts()
				if steps != 1 || lp != tc.wantLP || plain != tc.wantPlain {
					t.Errorf("requests: %d steps, %d with logprobs, %d sampled; want 1, %d, %d", steps, lp, plain, tc.wantLP, tc.wantPlain)
				}
				if run.Calls != 1+lp+plain {
					t.Errorf("run counts %d calls, the endpoint saw %d", run.Calls, 1+lp+plain)
				}
				for _, b := range env.batches(run.ID) {
					if b.Details["source"] != tc.wantSource || b.Details[tc.wantDetail] == nil {
						t.Fatalf("batch %d details %v: want source %s and %s", b.BatchIndex, b.Details, tc.wantSource, tc.wantDetail)
					}
				}
				for _, s := range env.scores(run.ID) {
					if s.Score == nil || math.Abs(*s.Score-tc.wantScore) > 1e-12 {
						t.Fatalf("row %d: score %v, want %v", s.RowID, runScoreText(s.Score), tc.wantScore)
					}
				}
				if run.MethodSettings.MinAllowedMass != evaluator.GEvalMinAllowedMass {
					t.Errorf("the run records min_allowed_mass %v, want %v", run.MethodSettings.MinAllowedMass, evaluator.GEvalMinAllowedMass)
				}
			})
		})
	}
}

func runScoreText(v *float64) string {
	if v == nil {
		return "missing"
	}
	return fmt.Sprint(*v)
}

// TestGEvalScoresAreBitIdentical: the same probabilities, listed in a
// different order by every answer, give bit-identical scores (they were
// summed over a Go map, which gave 3.1500000000000004 or
// 3.1499999999999995 from one sample to the next).
func TestGEvalScoresAreBitIdentical(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		alts := []any{"1", 0.05, "2", 0.3, " 2", 0.05, "3", 0.6}
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(1, 2))
		fe := newFormEndpoint(t, "2", func(int) (int, []map[string]any) {
			mu.Lock()
			perm := rng.Perm(len(alts) / 2)
			mu.Unlock()
			shuffled := make([]any, 0, len(alts))
			for _, k := range perm {
				shuffled = append(shuffled, alts[2*k], alts[2*k+1])
			}
			return 0, []map[string]any{tok("3", 0.6, shuffled...)}
		})
		run := env.launchGEval(fe.URL(), nil)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}
		var first *float64
		for _, s := range env.scores(run.ID) {
			if s.Score == nil {
				t.Fatalf("row %d: missing score", s.RowID)
			}
			if first == nil {
				first = s.Score
				continue
			}
			if math.Float64bits(*s.Score) != math.Float64bits(*first) {
				t.Fatalf("row %d: score %v, another row %v: the same probabilities must give the same bits", s.RowID, *s.Score, *first)
			}
		}
	})
}

// TestRunStatusFromScores: a run whose every score is missing fails with a
// clear reason; a failed call is tried again at the end of its round.
func TestRunStatusFromScores(t *testing.T) {
	t.Run("every answer unreadable fails the run", func(t *testing.T) {
		eachDB(t, func(t *testing.T, env *testEnv) {
			// Regression: calls that all answered with nothing readable
			// ended "succeeded".
			fe := newFormEndpoint(t, "I would rather not say.", func(int) (int, []map[string]any) { return http.StatusBadRequest, nil })
			run := env.launchGEval(fe.URL(), nil)
			if run.Status != models.RunFailed || !strings.Contains(run.Error, "no score could be read: all 30 scores are missing") {
				t.Fatalf("run %s (%q), want failed because no score could be read", run.Status, run.Error)
			}
		})
	})
	t.Run("a failed batch is tried again at the end of its round", func(t *testing.T) {
		eachDB(t, func(t *testing.T, env *testEnv) {
			tg := &target{}
			fj := newFakeJudge(t, simjudge.Options{Seed: 8}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				// The target batch fails every attempt of its first call.
				if tg.is(c) && !c.Repair && c.N <= fastTuning.MaxAttempts {
					writeAPIError(w, http.StatusInternalServerError, nil, "boom")
					return true
				}
				return false
			})
			r := env.startRunner(Config{})
			run := env.waitFinished(env.launch(r, env.newRun(fj.URL(), 1, 1, 10)).ID, 60*time.Second)
			if run.Status != models.RunSucceeded || run.BatchesFailed != 0 || run.MissingScores != 0 {
				t.Fatalf("run %s (%q), %d failed batches, %d missing; want succeeded with none", run.Status, run.Error, run.BatchesFailed, run.MissingScores)
			}
			var tb models.RunBatch
			for _, b := range env.batches(run.ID) {
				if storedKey(run, b) == tg.get() {
					tb = b
				}
			}
			if tb.Status != models.BatchDone || tb.Calls != 2 || tb.Attempts != fastTuning.MaxAttempts+1 || tb.Details["retried"] != true ||
				!containsAny(tb.Problems, "tried again at the end of the round after failing") {
				t.Errorf("target batch: status %s, calls %d, attempts %d, details %v, problems %q; want done on its second call",
					tb.Status, tb.Calls, tb.Attempts, tb.Details, tb.Problems)
			}
			// It was tried again after the round's other batches.
			keys := fj.Keys()
			times := fj.Times(tg.get(), false)
			for _, k := range keys {
				if k == tg.get() {
					continue
				}
				if other := fj.Times(k, false); len(other) > 0 && !other[0].Before(times[len(times)-1]) {
					t.Errorf("batch %s was first sent after the retry of the failed batch", k)
				}
			}
		})
	})
}

// TestGEvalUnreadableStepsCallIsCounted: a steps call whose answer cannot
// be read fails the run, and is still counted with its tokens and cost
// (regression: the run showed 0 calls, 0 tokens and an unknown cost for a
// call the judge was paid for).
func TestGEvalUnreadableStepsCallIsCounted(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		fe := newFormEndpoint(t, "2", func(int) (int, []map[string]any) { return http.StatusBadRequest, nil })
		fe.stepsText = "I would rather not list steps."
		run := env.launchGEval(fe.URL(), nil)
		if run.Status != models.RunFailed {
			t.Fatalf("run %s (%s), want failed", run.Status, run.Error)
		}
		steps, lp, plain := fe.counts()
		if steps == 0 || lp+plain != 0 {
			t.Fatalf("requests: %d steps, %d form; want steps only", steps, lp+plain)
		}
		// writeChoices reports 50 prompt and 1 completion tokens; the
		// judge costs $1 and $2 per million (newRun).
		wantCost := float64(steps) * (50*1.0 + 1*2.0) / 1e6
		if run.Calls != steps || run.PromptTokens != 50*steps || run.CompletionTokens != steps || run.CostUSD == nil || math.Abs(*run.CostUSD-wantCost) > 1e-12 {
			t.Errorf("run counts %d calls, %d+%d tokens, cost %v; the endpoint answered %d steps calls (want cost %g)",
				run.Calls, run.PromptTokens, run.CompletionTokens, run.CostUSD, steps, wantCost)
		}
	})
}
