package paper

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// The fake judge of TestPaperFindings.
//
// Its score for a sample is the sample's human rating, mapped linearly from
// the ratings' observed range onto the criterion's [lo, hi], plus two
// distortions:
//
//   - noise: Gaussian, standard deviation fakeNoise × (hi − lo), seeded by
//     the request's seed (the runner sends the run's seed plus the round),
//     the sample's text and the whole batch's text, so every round draws
//     fresh noise and identical requests get identical answers;
//   - batch-context bias: the judge assumes each batch is roughly average,
//     so it shifts every score of a batch by
//     fakeLambda × (scale centre − batch mean of the mapped human ratings).
//     A batch of good samples is marked down, a batch of poor ones up.
//
// Why this reproduces the paper's effect: a homogeneous batch (samples of
// similar previous score cut from a sorted list) has a mean far from the
// centre whenever its samples are far from it, so it gets a big shift, the
// same big shift in every homogeneous round but not in the random first
// round; the round scores disagree with the sample's mean by that shift
// (high batch bias), and the ends of the scale are squeezed towards the
// centre.
// A heterogeneous batch takes one sample from every stratum of the sorted
// list, so it spans the whole range and its mean sits near the dataset
// mean: the shift is small and nearly the same for every batch, which
// changes no ranking. Averaging rounds then removes most of the noise,
// which is why the ensemble beats one round.
//
// What it does not reproduce: the paper's correlation gap between the two
// compositions (Topical-Chat average .752 heterogeneous, .671 homogeneous).
// The squeeze keeps the order within a homogeneous batch, and this judge's
// scores are its human ratings plus noise, so the correlation sits near 0.98
// either way and the gap is under 0.005 with either sign depending on the
// seed. Only the batch bias and the ensemble gain are asserted.
//
// The judge answers in the two-stage format: one analysis line per sample
// ("SampleK: ..."), then "Float Scores: [Sample1:x, ...]", with usage
// counts by the product's own ~4-bytes-a-token estimate.
const (
	// fakeLambda is the strength of the batch-context bias: half the
	// distance from the batch mean to the centre of the scale.
	fakeLambda = 0.5
	// fakeNoise is the noise's standard deviation as a fraction of the
	// range: 0.2 on [1, 3], enough that one round is visibly noisier than
	// the mean of five.
	fakeNoise = 0.1
)

var (
	fakeScaleRE  = regexp.MustCompile(`float score within \[([^,\]]+), ([^\]]+)\]`)
	fakeSampleRE = regexp.MustCompile(`(?m)^Sample(\d+):$`)
)

// fakeJudge is an OpenAI-compatible chat completions endpoint that scores
// batch prompts as described above.
type fakeJudge struct {
	t *testing.T
	// human maps a sample's rendering in the prompt (its "<Label>: <Value>"
	// lines) to its human rating; lo and hi are the ratings' observed range.
	human  map[string]float64
	lo, hi float64
	calls  atomic.Int64
}

// newFakeJudge indexes the rows' human ratings (column col) by how the
// batch prompt shows them: one "<Label>: <Value>" line per field, the value
// trimmed and "(empty)" when blank (see evaluator.BuildBatchPrompt). Rows
// that render the same (two Topical-Chat rows differ only by a trailing
// space) get the mean of their ratings.
func newFakeJudge(t *testing.T, rows []models.DatasetRow, fields []evaluator.Field, col string) *fakeJudge {
	sum, n := map[string]float64{}, map[string]int{}
	f := &fakeJudge{t: t, human: map[string]float64{}, lo: math.Inf(1), hi: math.Inf(-1)}
	for _, r := range rows {
		h := r.Ratings[col]
		if h == nil {
			t.Fatalf("row %s has no %s rating", r.ExternalID, col)
		}
		k := renderSample(r.Sample(fields))
		sum[k] += *h
		n[k]++
		f.lo, f.hi = math.Min(f.lo, *h), math.Max(f.hi, *h)
	}
	for k, s := range sum {
		f.human[k] = s / float64(n[k])
	}
	return f
}

func renderSample(s evaluator.Sample) string {
	var b strings.Builder
	for _, fl := range s.Fields {
		v := strings.TrimSpace(fl.Value)
		if v == "" {
			v = "(empty)"
		}
		fmt.Fprintf(&b, "%s: %s\n", fl.Label, v)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (f *fakeJudge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Seed *int64 `json:"seed"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	msgs := make([]evaluator.Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = evaluator.Message{Role: m.Role, Content: contentText(m.Content)}
	}
	var seed int64
	if req.Seed != nil {
		seed = *req.Seed
	}
	f.calls.Add(1)
	answer, err := f.answer(msgs[len(msgs)-1].Content, seed)
	if err != nil {
		f.t.Errorf("fake judge: %v", err)
		http.Error(w, `{"error":{"message":"unreadable prompt","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	prompt, completion := evaluator.EstimateTokens(msgs), evaluator.EstimateTextTokens(answer)
	resp := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": "paper-fake-judge",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer}}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// contentText reads a message content given as a string or as text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// answer scores a two-stage batch prompt.
func (f *fakeJudge) answer(prompt string, seed int64) (string, error) {
	si := strings.Index(prompt, "\n# Samples\n")
	fi := strings.LastIndex(prompt, "\n# Output format\n")
	m := fakeScaleRE.FindStringSubmatch(prompt)
	if si < 0 || fi < si || m == nil {
		return "", fmt.Errorf("not a decimal batch prompt:\n%s", prompt)
	}
	lo, err1 := strconv.ParseFloat(m[1], 64)
	hi, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil || !(lo < hi) {
		return "", fmt.Errorf("unreadable scale %q", m[0])
	}
	section := prompt[si+len("\n# Samples\n") : fi]
	heads := fakeSampleRE.FindAllStringSubmatchIndex(section, -1)
	if len(heads) == 0 {
		return "", fmt.Errorf("no samples in the prompt")
	}
	span := hi - lo
	mapped := make([]float64, len(heads))
	keys := make([]string, len(heads))
	var batchMean float64
	for i, h := range heads {
		end := len(section)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		keys[i] = strings.Trim(section[h[1]:end], "\n")
		rating, ok := f.human[keys[i]]
		if !ok {
			return "", fmt.Errorf("Sample%d is not in the data set:\n%s", i+1, keys[i])
		}
		mapped[i] = lo + (rating-f.lo)/(f.hi-f.lo)*span
		batchMean += mapped[i] / float64(len(heads))
	}
	shift := fakeLambda * ((lo+hi)/2 - batchMean)

	var b strings.Builder
	scores := make([]string, len(heads))
	for i := range heads {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s", keys[i], section)
		rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
		s := mapped[i] + shift + rng.NormFloat64()*fakeNoise*span
		s = math.Round(math.Min(math.Max(s, lo), hi)*10) / 10
		scores[i] = fmt.Sprintf("Sample%d:%.1f", i+1, s)
		place := "about as good as"
		switch {
		case mapped[i] > batchMean+0.1*span:
			place = "better than"
		case mapped[i] < batchMean-0.1*span:
			place = "weaker than"
		}
		fmt.Fprintf(&b, "Sample%d: Compared side by side, this sample is %s the rest of the batch.\n", i+1, place)
	}
	b.WriteString("\nFloat Scores: [" + strings.Join(scores, ", ") + "]")
	return b.String(), nil
}

// findingsCase is one data set and criterion of TestPaperFindings.
type findingsCase struct {
	name, file string
	rubric     evaluator.Rubric
}

// findingsResult is what one BatchEval run gave.
type findingsResult struct {
	bias, pearson, single1, ensemble5 float64
	calls                             int
}

// TestPaperFindings reproduces two findings of the BatchEval paper through
// the real runner, on the shared FED and Topical-Chat data sets, with the
// fake judge above: heterogeneous batches have a lower mean batch bias than
// homogeneous ones, and the 5-round ensemble correlates better with the
// humans than the first round alone.
func TestPaperFindings(t *testing.T) {
	cases := []findingsCase{
		{name: "FED Overall", file: "fed-dialog.jsonl", rubric: fedRubric()},
		{name: "Topical-Chat overall", file: "topical-chat-usr.jsonl", rubric: topicalChatRubric()},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			path := sharedDataset(t, tc.file)
			l := newLab(t, "")
			ds, rows := l.importDataset(path, tc.rubric)
			fj := newFakeJudge(t, rows, tc.rubric.Fields, tc.rubric.Criteria[0].HumanColumn)
			srv := httptest.NewServer(fj)
			t.Cleanup(srv.Close)

			got := map[evaluator.Composition]findingsResult{}
			for _, comp := range []evaluator.Composition{evaluator.Heterogeneous, evaluator.Homogeneous} {
				s := evaluator.DefaultSettings()
				s.Rounds, s.BatchSize, s.Seed, s.Composition = 5, 10, 7, comp
				run := l.launch(models.Run{
					DatasetID: ds.ID, Name: fmt.Sprintf("%s, %s batches", tc.name, comp), Method: models.MethodBatchEval,
					Settings: s, RubricSnapshot: tc.rubric,
					JudgeSnapshot: models.JudgeSnapshot{Name: "paper fake judge", BaseURL: srv.URL + "/v1", Model: "paper-fake-judge",
						MaxConcurrency: 8, TimeoutSeconds: 30},
				})
				rep, err := report.Build(context.Background(), l.db, l.ws.ID, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				cr := rep.Criteria[0]
				if cr.Missing != 0 {
					t.Errorf("%s: %d scores missing, want 0", comp, cr.Missing)
				}
				if len(cr.Rounds) != 5 {
					t.Fatalf("%s: %d rounds in the report, want 5", comp, len(cr.Rounds))
				}
				r := findingsResult{bias: cr.MeanBatchBias, pearson: cr.Pearson.Coef,
					single1: cr.Rounds[0].Single.Coef, ensemble5: cr.Rounds[4].Ensemble.Coef, calls: run.Calls}
				got[comp] = r
				t.Logf("%s, %s: n=%d calls=%d mean batch bias %.4f, Pearson %.3f (Spearman %.3f); round 1 alone %.3f, 5-round ensemble %.3f",
					tc.name, comp, len(rows), r.calls, r.bias, r.pearson, cr.Spearman.Coef, r.single1, r.ensemble5)
			}
			het, hom := got[evaluator.Heterogeneous], got[evaluator.Homogeneous]
			if !(het.bias < hom.bias) {
				t.Errorf("mean batch bias: heterogeneous %.4f, homogeneous %.4f; want heterogeneous < homogeneous", het.bias, hom.bias)
			}
			if !(het.ensemble5 > het.single1) {
				t.Errorf("heterogeneous Pearson: 5-round ensemble %.3f, round 1 alone %.3f; want the ensemble higher", het.ensemble5, het.single1)
			}
		})
	}
}
