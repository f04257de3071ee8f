package runner

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// stripLogprobs is a fault that makes the endpoint ignore logprobs, as
// many local servers do: the request goes to the simulated judge without
// them.
func stripLogprobs(w http.ResponseWriter, r *http.Request, _ judgeCall) bool {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if json.Unmarshal(body, &req) == nil {
		delete(req, "logprobs")
		delete(req, "top_logprobs")
		body, _ = json.Marshal(req)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return false
}

// refuseLogprobs answers 400 to requests that ask for log-probabilities,
// as endpoints without logprobs support do.
func refuseLogprobs(w http.ResponseWriter, r *http.Request, _ judgeCall) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req map[string]any
	if json.Unmarshal(body, &req) == nil && req["logprobs"] == true {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"logprobs is not supported by this model","type":"invalid_request_error"}}`))
		return true
	}
	return false
}

// refuseSchema answers 400 to structured-output requests, as endpoints
// without json_schema support do.
func refuseSchema(w http.ResponseWriter, r *http.Request, _ judgeCall) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.Contains(string(body), `"json_schema"`) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"response_format json_schema is not supported","type":"invalid_request_error"}}`))
		return true
	}
	return false
}

// TestSampleWiseMethods runs each baseline end to end through the runner
// against the fake judge, including its failure paths: no logprobs (G-Eval
// falls back to sampling), unreadable answers (counted, never 0), and an
// endpoint without structured output (LLM-Eval falls back).
func TestSampleWiseMethods(t *testing.T) {
	cases := []struct {
		name   string
		method evaluator.Method
		ms     evaluator.MethodSettings
		opts   simjudge.Options
		fault  fault
		check  func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge)
	}{
		{"geval logprobs", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive},
			simjudge.Options{Seed: 3}, nil, func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge) {
				// One steps call, then one call per sample.
				if run.Calls != 31 || fj.Total() != 31 {
					t.Errorf("calls = %d (judge saw %d), want 31", run.Calls, fj.Total())
				}
				for _, b := range env.batches(run.ID) {
					if b.Details["source"] != evaluator.GEvalSourceLogprobs {
						t.Fatalf("batch %d source = %v, want logprobs", b.ID, b.Details["source"])
					}
				}
				if run.MethodSettings.GEvalSteps[env.rubric.Criteria[0].Name] == "" {
					t.Errorf("the generated evaluation steps were not stored on the run")
				}
			}},
		{"geval without logprobs samples n", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive},
			simjudge.Options{Seed: 3}, stripLogprobs, func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge) {
				for _, b := range env.batches(run.ID) {
					if b.Details["source"] != evaluator.GEvalSourceSamples || b.Details["total"] != float64(20) {
						t.Fatalf("batch %d details = %v, want 20 samples", b.ID, b.Details)
					}
					if b.Details["logprobs_unavailable"] != true {
						t.Errorf("batch %d does not record that logprobs were unavailable", b.ID)
					}
				}
			}},
		{"llmeval with unreadable keys", evaluator.MethodLLMEval, evaluator.MethodSettings{Samples: 1, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalHundred},
			simjudge.Options{Seed: 4, MissRate: 0.3}, nil, func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge) {
				missing := 0
				for _, s := range env.scores(run.ID) {
					if s.Score == nil {
						missing++
						continue
					}
					if *s.Score < 0 || *s.Score > 100 {
						t.Errorf("score %v outside LLM-Eval's 0-100", *s.Score)
					}
				}
				if missing == 0 || missing != run.MissingScores {
					t.Errorf("missing scores = %d, run counts %d; want the same, above 0", missing, run.MissingScores)
				}
				if run.RubricSnapshot.Criteria[0].Hi != 100 {
					t.Errorf("criterion range not set to LLM-Eval's scale: %+v", run.RubricSnapshot.Criteria[0])
				}
			}},
		// Regression: the structured-output mode was rediscovered for every
		// sample (one refused call per sample); it is remembered per run.
		{"llmeval without structured output", evaluator.MethodLLMEval, evaluator.MethodSettings{Samples: 1, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive},
			simjudge.Options{Seed: 4}, refuseSchema, func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge) {
				twice := 0
				for _, b := range env.batches(run.ID) {
					if b.Details["structured_output"] != "json_object" {
						t.Fatalf("batch %d: structured=%v, want json_object", b.ID, b.Details["structured_output"])
					}
					if b.Calls == 2 {
						twice++
					} else if b.Calls != 1 {
						t.Errorf("batch %d made %d calls, want 1 once the mode is known", b.ID, b.Calls)
					}
				}
				if twice != 1 || fj.Total() != 31 || run.Calls != 31 {
					t.Errorf("%d samples needed the refused call, judge saw %d requests, run counts %d calls; want 1, 31, 31", twice, fj.Total(), run.Calls)
				}
				if run.MissingScores != 0 {
					t.Errorf("missing = %d, want 0", run.MissingScores)
				}
				if got := run.MethodSettings.Learned["llmeval_structured_output"]; got != "json_object" {
					t.Errorf("the run records structured output %q, want json_object", got)
				}
			}},
		{"closerlook n ratings", evaluator.MethodCloserLook, evaluator.MethodSettings{Samples: 20, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive},
			simjudge.Options{Seed: 5, MissRate: 0.2}, nil, func(t *testing.T, env *testEnv, run models.Run, fj *fakeJudge) {
				if run.Calls != 30 {
					t.Errorf("calls = %d, want one per sample (n completions each)", run.Calls)
				}
				for _, b := range env.batches(run.ID) {
					ratings, _ := b.Details["ratings"].([]any)
					unreadable, _ := b.Details["unreadable"].(float64)
					if len(ratings)+int(unreadable) != 20 {
						t.Fatalf("batch %d: %d ratings + %v unreadable, want 20 in all", b.ID, len(ratings), unreadable)
					}
					// The original analyze-rate setup asks for integers.
					for _, v := range ratings {
						if f := v.(float64); f != math.Trunc(f) {
							t.Fatalf("batch %d: rating %v is not a whole number", b.ID, f)
						}
					}
					if !strings.Contains(b.Request, "whole numbers only") {
						t.Fatalf("batch %d: the prompt does not ask for whole numbers", b.ID)
					}
				}
				if ms := run.MethodSettings; ms.CloserLookTopP != 1 || ms.CloserLookScoring != evaluator.Integer {
					t.Errorf("method settings record top_p %v and %q ratings, want 1 and integer", ms.CloserLookTopP, ms.CloserLookScoring)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, tc.opts, tc.fault)
				r := env.startRunner(Config{})
				run := env.newRun(fj.URL(), 1, 4, 10)
				run.Method = string(tc.method)
				run.MethodSettings = tc.ms
				run = env.launch(r, run)
				run = env.waitFinished(run.ID, 60*time.Second)
				want := models.RunSucceeded
				if tc.opts.MissRate > 0 && tc.method == evaluator.MethodLLMEval {
					want = models.RunFinishedWithGaps // some keys unreadable
				}
				if run.Status != want {
					t.Fatalf("run %s (%s), want %s", run.Status, run.Error, want)
				}
				if run.BatchesDone != 30 || run.BatchesTotal != 30 {
					t.Errorf("batches %d/%d, want 30/30 (one per sample)", run.BatchesDone, run.BatchesTotal)
				}
				tc.check(t, env, run, fj)
			})
		})
	}
}

// ignoreN makes the endpoint answer one choice whatever n asks, as Ollama
// does: the runner must top up with more calls, each with its own seed.
func ignoreN(w http.ResponseWriter, r *http.Request, _ judgeCall) bool {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if json.Unmarshal(body, &req) == nil {
		delete(req, "n")
		body, _ = json.Marshal(req)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return false
}

func TestSamplingWhenTheEndpointIgnoresN(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 6}, ignoreN)
		r := env.startRunner(Config{})
		run := env.newRun(fj.URL(), 1, 4, 10)
		run.Method = string(evaluator.MethodCloserLook)
		// Decimal ratings, so that distinct completions show as distinct
		// ratings on the demo's 1-3 scale.
		run.MethodSettings = evaluator.MethodSettings{Samples: 5, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive, CloserLookScoring: evaluator.Decimal}
		run = env.waitFinished(env.launch(r, run).ID, 60*time.Second)
		if run.Status != models.RunSucceeded || run.Calls != 150 {
			t.Fatalf("run %s with %d calls, want succeeded with 5 calls for each of 30 samples", run.Status, run.Calls)
		}
		varied := 0
		for _, b := range env.batches(run.ID) {
			ratings, _ := b.Details["ratings"].([]any)
			seen := map[float64]bool{}
			for _, v := range ratings {
				seen[v.(float64)] = true
			}
			if len(seen) > 1 {
				varied++
			}
		}
		// With one seed for every top-up call, all five ratings of a
		// sample would be the same completion.
		if varied < 20 {
			t.Errorf("only %d of 30 samples got differing ratings: the top-up calls repeat one completion", varied)
		}
	})
}

// TestRepairRateLimitKeepsTheAnswer: the first answer of a batch is paid
// for, so a repair request that hits a long rate limit must not lose it;
// nor may the batch be stored done with its missing scores, which no
// resume would fill (QA). The run pauses with the batch pending, the
// answered call counted (calls, tokens, cost) and its answer in the
// answer cache, where the resume finds it at no cost and sends the repair.
func TestRepairRateLimitKeepsTheAnswer(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Every first answer leaves its scores out: whichever unit goes
		// first needs its repair.
		fj := newFakeJudge(t, simjudge.Options{Seed: 7, MissRate: 1}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Repair {
				writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, "slow down")
				return true
			}
			return false
		})
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 10))
		state := ""
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if state = string(env.job(*run.JobID).State); state == "scheduled" {
				break
			}
		}
		if state != "scheduled" {
			t.Fatalf("job is %s, want scheduled (snoozed for the rate limit)", state)
		}
		run = env.getRun(run.ID)
		for _, b := range env.batches(run.ID) {
			if b.Status != models.BatchPending {
				t.Errorf("batch %d is %s with problems %v; want pending for the resume", b.ID, b.Status, b.Problems)
			}
		}
		// At concurrency 1: one first answer, then its repair met the 429.
		if run.Calls != 1 || run.PromptTokens == 0 || run.CostUSD == nil || *run.CostUSD <= 0 || run.BatchesDone != 0 {
			t.Errorf("run counts %d calls, %d prompt tokens, cost %v, %d batches done; want the one answered call counted and no batch done",
				run.Calls, run.PromptTokens, run.CostUSD, run.BatchesDone)
		}
		// Written before the run paused (the job is snoozed after that).
		var cached int64
		if err := env.db.Gorm.Raw("SELECT COUNT(*) FROM judge_response_cache WHERE workspace_id = ?", env.ws.ID).Scan(&cached).Error; err != nil {
			t.Fatal(err)
		}
		if cached != 1 {
			t.Errorf("%d answers in the answer cache, want the first answer", cached)
		}
	})
}

// TestEveryCallFailingFailsTheRun: for every sample-wise method, an
// endpoint that refuses every request for good leaves every score missing
// and the run must end failed, never "succeeded" (issue 6's regression:
// such runs ended succeeded with nothing in them).
func TestEveryCallFailingFailsTheRun(t *testing.T) {
	refuseAll := func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
		writeAPIError(w, http.StatusUnprocessableEntity, nil, "unsupported parameter")
		return true
	}
	for _, m := range []evaluator.Method{evaluator.MethodGEval, evaluator.MethodLLMEval, evaluator.MethodCloserLook} {
		t.Run(string(m), func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, simjudge.Options{Seed: 3}, refuseAll)
				r := env.startRunner(Config{})
				run := env.newRun(fj.URL(), 1, 4, 10)
				run.Method = string(m)
				// G-Eval's steps are given, so its per-sample calls are
				// the ones refused.
				run.MethodSettings = evaluator.MethodSettings{Samples: 2, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive,
					GEvalSteps: map[string]string{env.rubric.Criteria[0].Name: "1. Read.\n2. Score."}}
				run = env.waitFinished(env.launch(r, run).ID, 60*time.Second)
				if run.Status != models.RunFailed || run.Error == "" {
					t.Fatalf("run %s (%q), want failed with a reason", run.Status, run.Error)
				}
				if fj.Total() == 0 || run.BatchesFailed != run.BatchesTotal {
					t.Errorf("judge saw %d requests; %d of %d units failed, want all", fj.Total(), run.BatchesFailed, run.BatchesTotal)
				}
				for _, s := range env.scores(run.ID) {
					if s.Score != nil {
						t.Errorf("row %d has score %v from a refused call", s.RowID, *s.Score)
					}
				}
			})
		})
	}
}
