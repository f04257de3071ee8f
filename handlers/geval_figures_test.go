package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// storedAnswer is a row of the answer cache as this test reads it, with
// no help from the judge package: the choices' text and log-probabilities
// as the endpoint returned them, and the run and unit (batch) that paid.
type storedAnswer struct {
	Choices []struct {
		Text     string
		Logprobs []struct {
			Token   string
			Logprob float64
			Top     []struct {
				Token   string
				Logprob float64
			}
		}
	}
	Run  int64 `json:"run"`
	Unit int64 `json:"unit"`
}

// storedAnswersByUnit reads every stored judge answer of a run, by unit.
func storedAnswersByUnit(t *testing.T, env *testEnv, runID int64) map[int64][]storedAnswer {
	t.Helper()
	rows, err := env.db.SQL.QueryContext(context.Background(), "SELECT response FROM judge_response_cache WHERE workspace_id = "+strconv.FormatInt(env.ws.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64][]storedAnswer{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var a storedAnswer
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatalf("stored answer does not parse: %v: %s", err, raw)
		}
		if a.Run == runID {
			out[a.Unit] = append(out[a.Unit], a)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// handEstimate is G-Eval's score worked out by this test from the stored
// answers alone, as the paper and method.md define it.
type handEstimate struct {
	score  float64
	probs  map[int]float64
	source string // "logprobs" or "samples"
}

// handFromLogprobs reads the distribution at the first generated token
// that is a number: p(s) = the sum of exp(logprob) over the distinct
// candidate tokens (alternatives and the generated one) that read as s,
// renormalised over the allowed scores lo..hi. ok is false when the
// written score is not allowed and the allowed scores hold less than
// least of the probability there (the least-mass rule).
func handFromLogprobs(a storedAnswer, lo, hi int, least float64) (handEstimate, bool) {
	if len(a.Choices) == 0 {
		return handEstimate{}, false
	}
	for _, tok := range a.Choices[0].Logprobs {
		written, err := strconv.ParseFloat(strings.TrimSpace(tok.Token), 64)
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		mass := map[int]float64{}
		consider := func(token string, lp float64) {
			if seen[token] {
				return
			}
			seen[token] = true
			if s, err := strconv.Atoi(strings.TrimSpace(token)); err == nil && s >= lo && s <= hi {
				mass[s] += math.Exp(lp)
			}
		}
		for _, alt := range tok.Top {
			consider(alt.Token, alt.Logprob)
		}
		consider(tok.Token, tok.Logprob)
		total := 0.0
		for s := lo; s <= hi; s++ {
			total += mass[s]
		}
		allowed := written == math.Trunc(written) && written >= float64(lo) && written <= float64(hi)
		if total == 0 || (!allowed && total < least) {
			return handEstimate{}, false
		}
		e := handEstimate{probs: map[int]float64{}, source: "logprobs"}
		for s := lo; s <= hi; s++ {
			e.probs[s] = mass[s] / total
			e.score += e.probs[s] * float64(s)
		}
		return e, true
	}
	return handEstimate{}, false
}

// handFromSamples counts the sampled answers that are one allowed integer.
func handFromSamples(texts []string, lo, hi int) (handEstimate, bool) {
	counts, used := map[int]int{}, 0
	for _, t := range texts {
		s, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "-")))
		if err != nil || s < lo || s > hi {
			continue
		}
		counts[s]++
		used++
	}
	if used == 0 {
		return handEstimate{}, false
	}
	e := handEstimate{probs: map[int]float64{}, source: "samples"}
	for s := lo; s <= hi; s++ {
		e.probs[s] = float64(counts[s]) / float64(used)
		e.score += e.probs[s] * float64(s)
	}
	return e, true
}

// handFromUnit works a unit's estimate out from its stored answers: the
// log-probabilities when an answer carries them and they are usable, the
// sampled answers otherwise.
func handFromUnit(answers []storedAnswer, lo, hi int, least float64) (handEstimate, bool) {
	var texts []string
	for _, a := range answers {
		if len(a.Choices) == 1 && len(a.Choices[0].Logprobs) > 0 {
			if e, ok := handFromLogprobs(a, lo, hi, least); ok {
				return e, true
			}
			continue
		}
		for _, c := range a.Choices {
			texts = append(texts, c.Text)
		}
	}
	return handFromSamples(texts, lo, hi)
}

// outOfScaleEndpoint is a G-Eval judge whose log-probability answers take
// turns: an allowed score; "4" on the 1-3 scale with 0.6 of the mass on
// allowed scores (read at its own position); "4" with only 0.3 on them
// (left to sampling). Sampled answers are 1, 2 or 3 in turn, so the
// fallback has a spread of its own.
func outOfScaleEndpoint(t *testing.T) string {
	var mu sync.Mutex
	lp, sampled := 0, 0
	alt := func(token string, p float64) map[string]any {
		return map[string]any{"token": token, "logprob": math.Log(p), "bytes": nil}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
			N        int                        `json:"n"`
			Logprobs bool                       `json:"logprobs"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var choices []map[string]any
		mu.Lock()
		switch {
		case !strings.Contains(req.Messages[len(req.Messages)-1].Content, "Evaluation Form"):
			choices = []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "Evaluation Steps:\n1. Read it.\n2. Rate it."}}}
		case req.Logprobs:
			var token string
			var top []map[string]any
			switch lp % 3 {
			case 0:
				token, top = " 2", []map[string]any{alt(" 2", 0.5), alt(" 3", 0.3), alt(" 1", 0.15), alt("2", 0.05)}
			case 1:
				token, top = " 4", []map[string]any{alt(" 3", 0.4), alt(" 4", 0.4), alt(" 2", 0.2)}
			default:
				token, top = " 4", []map[string]any{alt(" 4", 0.7), alt(" 3", 0.2), alt(" 1", 0.1)}
			}
			lp++
			choices = []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": token},
				"logprobs": map[string]any{"content": []map[string]any{{"token": token, "logprob": top[0]["logprob"], "bytes": nil, "top_logprobs": top}}}}}
		default:
			for k := range max(1, req.N) {
				choices = append(choices, map[string]any{"index": k, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": strconv.Itoa(1 + sampled%3)}})
				sampled++
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "form-judge", "choices": choices,
			"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": len(choices), "total_tokens": 100 + len(choices)}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestGEvalScoreFromStoredAnswers recomputes every G-Eval score by hand
// from what the run stored (the log-probabilities the judge returned, or
// its sampled answers) and checks the figure each place shows it: the
// stored score, the batch page's probabilities, the sample page, the run
// page's sample table, the CSV and JSON exports and the API's results.
// Runs: the simulated judge with log-probabilities, the simulated judge
// sampled (logprobs off), and an endpoint whose written score is at times
// outside the scale, with enough or too little mass on allowed scores.
func TestGEvalScoreFromStoredAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		priced := models.Judge{WorkspaceID: env.ws.ID, Name: "Form judge", BaseURL: outOfScaleEndpoint(t), Model: "form-judge", MaxConcurrency: 4, TimeoutSeconds: 10}
		if err := env.db.SaveJudge(ctx, &priced); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name     string
			logprobs bool
			judge    *models.Judge
			// want: how many units should have used each source (-1: any).
			wantLogprobs, wantSamples int
		}{
			{"simulated judge, log-probabilities", true, nil, -1, 0},
			{"simulated judge, sampled", false, nil, 0, -1},
			{"written score outside the scale", true, &priced, 40, 20},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := env.startRun(d.dataset, tc.name, models.MethodGEval, func(r *models.Run) {
					r.MethodSettings = evaluator.DefaultMethodSettings()
					r.MethodSettings.UseLogprobs = tc.logprobs
					r.MethodSettings.Samples = 6
					if tc.judge != nil {
						r.JudgeID, r.JudgeSnapshot, r.Simulated = &tc.judge.ID, tc.judge.Snapshot(), false
					}
				})
				run = env.waitRun(run.ID, 90*time.Second)
				if run.Status != models.RunSucceeded {
					t.Fatalf("run %s: %s", run.Status, run.Error)
				}
				least := run.MethodSettings.MinAllowedMass
				if least != evaluator.GEvalMinAllowedMass {
					t.Errorf("run records a least mass of %g, want %g", least, evaluator.GEvalMinAllowedMass)
				}
				answers := storedAnswersByUnit(t, env, run.ID)
				batches, err := env.db.ListBatches(ctx, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				external := map[int64]string{}
				for _, r := range rows {
					external[r.ID] = r.ExternalID
				}
				csvRecords, err := csv.NewReader(strings.NewReader(env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				csvCell := func(id, column string) string {
					for _, rec := range csvRecords[1:] {
						if rec[0] == id {
							for k, h := range csvRecords[0] {
								if h == column {
									return rec[k]
								}
							}
						}
					}
					return "(none)"
				}
				export := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes()
				api := env.get(fmt.Sprintf("/api/v1/runs/%d/results", run.ID)).Body.Bytes()
				finals := func(b []byte) map[string]map[string]float64 {
					var doc struct {
						Report struct {
							Criteria []struct {
								Name    string
								Samples []struct {
									ID     string
									Final  *float64
									Rounds []*float64
								}
							}
						}
					}
					if err := json.Unmarshal(b, &doc); err != nil {
						t.Fatalf("export does not parse: %v", err)
					}
					out := map[string]map[string]float64{}
					for _, c := range doc.Report.Criteria {
						out[c.Name] = map[string]float64{}
						for _, s := range c.Samples {
							if s.Final == nil || len(s.Rounds) != 1 || s.Rounds[0] == nil || *s.Rounds[0] != *s.Final {
								t.Errorf("%s %s: final %v, rounds %v; want one round equal to the final", c.Name, s.ID, s.Final, s.Rounds)
								continue
							}
							out[c.Name][s.ID] = *s.Final
						}
					}
					return out
				}
				exported, fromAPI := finals(export), finals(api)
				runPage := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()

				sources := map[string]int{}
				checked := 0
				for _, b := range batches {
					if b.Status != models.BatchDone || len(b.RowIDs) != 1 {
						t.Errorf("batch %d: %s with %d samples", b.ID, b.Status, len(b.RowIDs))
						continue
					}
					crit := run.RubricSnapshot.Criteria[b.CriterionIndex]
					lo, hi := int(math.Ceil(crit.Lo)), int(math.Floor(crit.Hi))
					want, ok := handFromUnit(answers[b.ID], lo, hi, least)
					if !ok {
						t.Errorf("batch %d: no estimate from its %d stored answers", b.ID, len(answers[b.ID]))
						continue
					}
					sources[want.source]++
					if got, _ := b.Details["source"].(string); got != want.source {
						t.Errorf("batch %d: source %q, the stored answers give %q", b.ID, got, want.source)
					}
					id := external[b.RowIDs[0]]
					scores, err := env.db.ListRowScores(ctx, run.ID, b.RowIDs[0])
					if err != nil {
						t.Fatal(err)
					}
					var stored *float64
					for _, s := range scores {
						if s.BatchID == b.ID {
							stored = s.Score
						}
					}
					if stored == nil || math.Abs(*stored-want.score) > 1e-12 {
						t.Errorf("%s %s: stored score %v, by hand %.15g", crit.Name, id, orNil(stored), want.score)
						continue
					}
					for place, got := range map[string]float64{"JSON export": exported[crit.Name][id], "API": fromAPI[crit.Name][id]} {
						if got != *stored {
							t.Errorf("%s %s: %s says %.17g, stored %.17g", crit.Name, id, place, got, *stored)
						}
					}
					if got, want := csvCell(id, crit.Name+" final"), strconv.FormatFloat(want.score, 'f', 4, 64); strings.TrimRight(strings.TrimRight(want, "0"), ".") != got {
						t.Errorf("%s %s: CSV final %q, by hand %s", crit.Name, id, got, want)
					}
					two := strconv.FormatFloat(want.score, 'f', 2, 64)
					sample := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, b.RowIDs[0])).Body.String()
					if !strings.Contains(sample, "Score: "+two) {
						t.Errorf("%s %s: sample page lacks Score: %s", crit.Name, id, two)
					}
					batch := env.get(fmt.Sprintf("/runs/%d/batches/%d", run.ID, b.ID)).Body.String()
					var probs []string
					for _, m := range regexp.MustCompile(`data-testid="prob-row"><td class="num">([^<]*)</td><td class="num">([^<]*)<`).FindAllStringSubmatch(batch, -1) {
						probs = append(probs, m[1]+"="+m[2])
					}
					var wantProbs []string
					for s := lo; s <= hi; s++ {
						wantProbs = append(wantProbs, fmt.Sprintf("%d=%s", s, strconv.FormatFloat(want.probs[s], 'f', 3, 64)))
					}
					sort.Strings(wantProbs)
					if strings.Join(probs, " ") != strings.Join(wantProbs, " ") {
						t.Errorf("%s %s: batch page probabilities %v, by hand %v", crit.Name, id, probs, wantProbs)
					}
					if b.CriterionIndex == 0 {
						row := regexp.MustCompile(`<a href="/runs/\d+/samples/` + strconv.FormatInt(b.RowIDs[0], 10) + `">[^<]*</a></td><td class="small">[^<]*</td><td class="num">[^<]*</td><td class="num"><strong>([^<]*)</strong>`).FindStringSubmatch(runPage)
						if row == nil || row[1] != two {
							t.Errorf("%s %s: run page's sample table says %v, by hand %s", crit.Name, id, row, two)
						}
					}
					checked++
				}
				if checked != 60 {
					t.Errorf("checked %d samples by hand, want 60 (30 samples, 2 criteria)", checked)
				}
				for src, want := range map[string]int{"logprobs": tc.wantLogprobs, "samples": tc.wantSamples} {
					if want >= 0 && sources[src] != want {
						t.Errorf("%d units from %s, want %d (all: %v)", sources[src], src, want, sources)
					}
				}
			})
		}
	})
}
