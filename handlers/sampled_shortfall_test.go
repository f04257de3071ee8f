package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// shortfallEndpoint is a judge that answers the first call of a sampled
// unit (n = asked) with fewer choices than asked, every one "Rating: 2",
// and refuses the top-up call for the rest (HTTP 400, not retried): a
// unit's prompt decides whether 12 or 5 of the 20 come. G-Eval's steps
// request (no n) gets a list of steps. It records how many answers each
// unit's prompt got.
type shortfallEndpoint struct {
	srv   *httptest.Server
	asked int
	mu    sync.Mutex
	// given is the number of choices of each form prompt's first call.
	given map[string]int
}

func newShortfallEndpoint(t *testing.T, asked int) *shortfallEndpoint {
	se := &shortfallEndpoint{asked: asked, given: map[string]int{}}
	se.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
			N        int                        `json:"n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		prompt := ""
		for _, m := range req.Messages {
			prompt += m.Content
		}
		var choices []map[string]any
		switch {
		case req.N == 0:
			choices = []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "Evaluation Steps:\n1. Read it.\n2. Rate it."}}}
		case req.N == se.asked:
			k := se.shareOf(prompt)
			se.mu.Lock()
			se.given[prompt] = k
			se.mu.Unlock()
			for i := range k {
				choices = append(choices, map[string]any{"index": i, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "The response is fine.\nRating: 2"}})
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"this deployment serves no more completions for this prompt","type":"invalid_request_error"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "short-judge", "choices": choices,
			"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": len(choices), "total_tokens": 100 + len(choices)}})
	}))
	t.Cleanup(se.srv.Close)
	return se
}

// shareOf is how many of the asked answers a prompt's first call gets:
// 5 (fewer than half) for about one prompt in four, else 12.
func (se *shortfallEndpoint) shareOf(prompt string) int {
	if crc32.ChecksumIEEE([]byte(prompt))%4 == 0 {
		return 5
	}
	return 12
}

// TestSampledShortfallIsRecordedAndShown: a G-Eval (sampling) or
// CloserLook unit of which some calls failed but others answered
// (regression: the score was computed from the 12 answers that came, the
// failure was dropped, nothing was recorded and the batch page read "12
// sampled answers ... (12 of 12 could be read)"). Now a unit with at least
// half the asked answers keeps its score, says "12 of 20 asked answered"
// on its batch and sample pages and in its problems, and is counted on
// the run page, in the API's run and in the JSON export; a unit with fewer
// than half fails, its score missing.
func TestSampledShortfallIsRecordedAndShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		const asked = 20
		for _, method := range []string{models.MethodGEval, models.MethodCloserLook} {
			t.Run(method, func(t *testing.T) {
				se := newShortfallEndpoint(t, asked)
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Short judge " + method, BaseURL: se.srv.URL + "/v1", Model: "short-judge", MaxConcurrency: 4, TimeoutSeconds: 10}
				if err := env.db.SaveJudge(ctx, &j); err != nil {
					t.Fatal(err)
				}
				run := env.startRun(d.dataset, "Shortfall "+method, method, func(r *models.Run) {
					r.MethodSettings = evaluator.DefaultMethodSettings()
					r.MethodSettings.UseLogprobs = false
					r.MethodSettings.Samples = asked
					r.JudgeID, r.JudgeSnapshot, r.Simulated = &j.ID, j.Snapshot(), false
				})
				run = env.waitRun(run.ID, 90*time.Second)
				se.mu.Lock()
				kept, dropped := 0, 0
				for _, k := range se.given {
					if k*2 >= asked {
						kept++
					} else {
						dropped++
					}
				}
				se.mu.Unlock()
				if kept == 0 || dropped == 0 {
					t.Fatalf("the endpoint gave %d units enough answers and %d too few; the test needs both", kept, dropped)
				}
				if run.Status != models.RunFinishedWithGaps {
					t.Errorf("run %s (%s), want finished with gaps", run.Status, run.Error)
				}
				if run.ShortScores != kept || run.MissingScores != dropped || run.BatchesFailed != dropped {
					t.Errorf("run counts %d short scores, %d missing, %d failed units; want %d, %d, %d",
						run.ShortScores, run.MissingScores, run.BatchesFailed, kept, dropped, dropped)
				}
				batches, err := env.db.ListBatches(ctx, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				shortSeen, failedSeen := 0, 0
				for _, b := range batches {
					full, err := env.db.FindBatch(ctx, run.ID, b.ID)
					if err != nil {
						t.Fatal(err)
					}
					scores, err := env.db.ListBatchScores(ctx, run.ID, b.ID)
					if err != nil || len(scores) != 1 {
						t.Fatalf("batch %d: %d scores (%v)", b.ID, len(scores), err)
					}
					problems := strings.Join(full.Problems, " | ")
					page := env.get(fmt.Sprintf("/runs/%d/batches/%d", run.ID, b.ID)).Body.String()
					sample := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, b.RowIDs[0])).Body.String()
					switch full.Status {
					case models.BatchDone:
						shortSeen++
						if scores[0].Score == nil || *scores[0].Score != 2 {
							t.Errorf("batch %d: score %v, want 2 from the 12 answers", b.ID, orNil(scores[0].Score))
						}
						if !strings.Contains(problems, "12 of 20 asked answers came") || !strings.Contains(problems, "serves no more completions") {
							t.Errorf("batch %d: problems %q do not state the shortfall and the judge's error", b.ID, problems)
						}
						if !strings.Contains(page, `data-testid="sampled-answers">12 of 20 asked answered<`) {
							t.Errorf("batch %d: page does not say 12 of 20 asked answered", b.ID)
						}
						if method == models.MethodGEval && !strings.Contains(page, "12 sampled answers (12 of 20 asked answered)") {
							t.Errorf("batch %d: the probabilities' source does not say 12 of 20 asked answered", b.ID)
						}
						if !strings.Contains(sample, "(from 12 of 20 asked answered)") {
							t.Errorf("sample %d: page does not say its score is from 12 of 20 asked answers", b.RowIDs[0])
						}
					case models.BatchFailed:
						failedSeen++
						if scores[0].Score != nil {
							t.Errorf("batch %d: failed with 5 of 20 answers but scored %v", b.ID, *scores[0].Score)
						}
						if !strings.Contains(problems, "only 5 of 20 asked answers came") {
							t.Errorf("batch %d: problems %q do not say only 5 of 20 came", b.ID, problems)
						}
						if !strings.Contains(page, `data-testid="sampled-answers">5 of 20 asked answered<`) {
							t.Errorf("batch %d: page does not say 5 of 20 asked answered", b.ID)
						}
					}
				}
				if shortSeen != kept || failedSeen != dropped {
					t.Errorf("%d short and %d failed units stored; want %d and %d", shortSeen, failedSeen, kept, dropped)
				}
				runPage := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				if want := fmt.Sprintf(`data-testid="short-scores">%d<`, kept); !strings.Contains(runPage, want) {
					t.Errorf("run page lacks %s", want)
				}
				var api struct {
					ShortScores *int `json:"short_scores"`
				}
				if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/runs/%d", run.ID)).Body.Bytes(), &api); err != nil || api.ShortScores == nil || *api.ShortScores != kept {
					t.Errorf("API run short_scores %v (%v), want %d", api.ShortScores, err, kept)
				}
				var export struct {
					Report struct {
						Run struct {
							ShortScores int `json:"short_scores"`
						}
					}
				}
				if err := json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &export); err != nil || export.Report.Run.ShortScores != kept {
					t.Errorf("JSON export short_scores %d (%v), want %d", export.Report.Run.ShortScores, err, kept)
				}
			})
		}
	})
}
