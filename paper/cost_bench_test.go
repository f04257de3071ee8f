package paper

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// Example prices in US dollars per million tokens, to turn tokens into a
// cost figure: $2.50 in, $10 out (GPT-4o's list price in 2024). They are an
// example only; the ratio of two methods' costs depends on them through
// the split between prompt and completion tokens.
var (
	examplePriceIn  = 2.50
	examplePriceOut = 10.0
)

// GPT-4 (8k context) list prices when the paper was written, in US dollars
// per million tokens: $30 in, $60 out. Used only to re-price the same
// token counts, since the paper's cost figures were GPT-4 bills.
const (
	gpt4PriceIn  = 30.0
	gpt4PriceOut = 60.0
)

// costFigures are one method's usage on the whole data set.
type costFigures struct {
	samples                          int
	calls, promptTokens, completions int
	costUSD                          float64
}

func (c costFigures) perSample(x int) float64 { return float64(x) / float64(c.samples) }

func (c costFigures) tokens() int { return c.promptTokens + c.completions }

// costMethod is one method configuration of BenchmarkCostPerSample.
type costMethod struct {
	name     string
	method   string
	settings func(*evaluator.Settings)
	ms       evaluator.MethodSettings
	// refuse makes the endpoint answer HTTP 400 to requests that carry
	// this JSON key ("logprobs", "json_schema"), as endpoints without
	// that feature do; "" is the simulated judge as it is.
	refuse string
}

func costMethods() []costMethod {
	ms := func(n int, logprobs bool) evaluator.MethodSettings {
		return evaluator.MethodSettings{Samples: n, UseLogprobs: logprobs, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
	}
	return []costMethod{
		{name: "BatchEval_N5_B10", method: models.MethodBatchEval, settings: func(s *evaluator.Settings) { s.Rounds, s.BatchSize = 5, 10 }},
		{name: "GEval_n20", method: models.MethodGEval, ms: ms(20, false)},
		{name: "GEval_logprobs", method: models.MethodGEval, ms: ms(20, true)},
		// LLM-Eval found greedy decoding best.
		{name: "LLMEval", method: models.MethodLLMEval, ms: ms(1, false), settings: func(s *evaluator.Settings) { s.Temperature = 0 }},
		{name: "CloserLook_n20", method: models.MethodCloserLook, ms: ms(20, false)},
		// Endpoints without the feature a method prefers: G-Eval asks for
		// logprobs once per run, LLM-Eval finds its structured-output mode
		// once per run.
		{name: "GEval_logprobs_refused", method: models.MethodGEval, ms: ms(20, true), refuse: `"logprobs"`},
		{name: "LLMEval_no_json_schema", method: models.MethodLLMEval, ms: ms(1, false), refuse: `"json_schema"`,
			settings: func(s *evaluator.Settings) { s.Temperature = 0 }},
	}
}

// refusingEndpoint forwards requests to the simulated judge at simURL,
// except those whose body holds key, which get HTTP 400.
func refusingEndpoint(tb testing.TB, simURL, key string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(key)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"%s is not supported","type":"invalid_request_error"}}`, strings.Trim(key, `"`))
			return
		}
		resp, err := http.Post(simURL+strings.TrimPrefix(r.URL.Path, "/v1"), "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// costBench runs methods on FED through the simulated judge, one full run
// per call of measure.
type costBench struct {
	l      *lab
	ds     models.Dataset
	rows   int
	simURL string
	tb     testing.TB
}

func newCostBench(b *testing.B) *costBench {
	b.Helper()
	path := sharedDataset(b, "fed-dialog.jsonl")
	sim, err := simjudge.Start(simjudge.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sim.Close() })
	l := newLab(b, sim.URL)
	ds, rows := l.importDataset(path, fedRubric())
	return &costBench{l: l, ds: ds, rows: len(rows), simURL: sim.URL, tb: b}
}

// measure makes one full run of m and returns its usage.
func (c *costBench) measure(m costMethod) costFigures {
	s := evaluator.DefaultSettings()
	s.Seed = 11
	if m.settings != nil {
		m.settings(&s)
	}
	snap := models.JudgeSnapshot{Name: "Simulated judge", Simulated: true, Model: simjudge.DefaultModel,
		MaxConcurrency: 8, TimeoutSeconds: 30, PriceInputPerMTok: &examplePriceIn, PriceOutputPerMTok: &examplePriceOut}
	if m.refuse != "" {
		snap.Simulated = false
		snap.BaseURL = refusingEndpoint(c.tb, c.simURL, m.refuse)
	}
	run := c.l.launch(models.Run{
		DatasetID: c.ds.ID, Name: "cost: " + m.name, Method: m.method, Settings: s, MethodSettings: m.ms,
		RubricSnapshot: fedRubric(), Simulated: true, JudgeSnapshot: snap,
	})
	f := costFigures{samples: c.rows, calls: run.Calls, promptTokens: run.PromptTokens, completions: run.CompletionTokens}
	if run.CostUSD != nil {
		f.costUSD = *run.CostUSD
	}
	return f
}

// BenchmarkCostPerSample measures, on the 125 FED dialogues with one
// criterion and the simulated judge, what each method spends per sample:
// judge calls, prompt tokens and completion tokens (the simulated judge
// counts both with the product's ~4-bytes-a-token estimate), and the cost
// at the example prices. Every iteration is a full run through the runner,
// so b.N stays small; run with -benchtime=1x for exactly one. The last
// sub-benchmark reports BatchEval's totals over CloserLook's, from runs made
// in this process (the paper's figure is 0.64 of the cost).
func BenchmarkCostPerSample(b *testing.B) {
	c := newCostBench(b)
	got := map[string]costFigures{}
	for _, m := range costMethods() {
		b.Run(m.name, func(b *testing.B) {
			var f costFigures
			for b.Loop() {
				f = c.measure(m)
			}
			got[m.name] = f
			b.ReportMetric(f.perSample(f.calls), "calls/sample")
			b.ReportMetric(f.perSample(f.promptTokens), "prompt-tok/sample")
			b.ReportMetric(f.perSample(f.completions), "compl-tok/sample")
			b.ReportMetric(f.costUSD/float64(f.samples)*1e3, "example-m$/sample")
		})
	}
	b.Run("Ratio_BatchEval_over_CloserLook", func(b *testing.B) {
		for b.Loop() {
			// The ratio is computed from the runs above; when the -bench
			// pattern skipped them, make them here.
			for _, m := range costMethods() {
				if _, ok := got[m.name]; !ok && (m.name == "BatchEval_N5_B10" || m.name == "CloserLook_n20") {
					got[m.name] = c.measure(m)
				}
			}
		}
		be, cl := got["BatchEval_N5_B10"], got["CloserLook_n20"]
		b.ReportMetric(float64(be.tokens())/float64(cl.tokens()), "tokens-ratio")
		b.ReportMetric(be.costUSD/cl.costUSD, "example-cost-ratio")
		b.ReportMetric(float64(be.promptTokens)/float64(cl.promptTokens), "prompt-tok-ratio")
		b.ReportMetric(float64(be.completions)/float64(cl.completions), "compl-tok-ratio")
		gpt4 := func(f costFigures) float64 {
			return float64(f.promptTokens)*gpt4PriceIn + float64(f.completions)*gpt4PriceOut
		}
		b.ReportMetric(gpt4(be)/gpt4(cl), "gpt4-price-cost-ratio")
	})
}

// syntheticRun is a finished 1000-sample, 5-round BatchEval run with human
// ratings, built in memory for the report benchmarks.
type syntheticRun struct {
	run     models.Run
	ds      models.Dataset
	rows    []models.DatasetRow
	batches []models.RunBatch
	scores  []models.RunScore
}

func newSyntheticRun(samples, rounds, batchSize int) syntheticRun {
	rng := rand.New(rand.NewPCG(1, 2))
	crit := evaluator.Criterion{Name: "Overall", Lo: 1, Hi: 3, HumanColumn: "overall"}
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = rounds, batchSize
	sr := syntheticRun{
		run: models.Run{ID: 1, Method: models.MethodBatchEval, Status: models.RunSucceeded, Settings: s,
			RubricSnapshot: evaluator.Rubric{Task: "a response", Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, Criteria: []evaluator.Criterion{crit}}},
		ds: models.Dataset{ID: 1, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"overall"}},
	}
	human := make([]float64, samples)
	for i := range samples {
		h := 1 + 2*rng.Float64()
		human[i] = h
		sr.rows = append(sr.rows, models.DatasetRow{ID: int64(i + 1), DatasetID: 1, Position: i + 1, ExternalID: fmt.Sprintf("s%04d", i),
			Data: map[string]string{"text": "sample"}, Ratings: map[string]*float64{"overall": &h}})
	}
	bid := int64(0)
	for r := range rounds {
		perm := rng.Perm(samples)
		for start := 0; start < samples; start += batchSize {
			bid++
			b := models.RunBatch{ID: bid, RunID: 1, Round: r, BatchIndex: start / batchSize, Status: models.BatchDone}
			for k, i := range perm[start:min(start+batchSize, samples)] {
				b.RowIDs = append(b.RowIDs, int64(i+1))
				v := math.Round(math.Min(math.Max(human[i]+0.3*rng.NormFloat64(), 1), 3)*10) / 10
				sr.scores = append(sr.scores, models.RunScore{RunID: 1, BatchID: bid, Round: r, RowID: int64(i + 1), Label: k + 1, Score: &v})
			}
			sr.batches = append(sr.batches, b)
		}
	}
	return sr
}

// sumScores is the baseline of the report benchmarks: one pass adding up
// the scores, the least any report must do.
func sumScores(scores []models.RunScore) float64 {
	var s float64
	for _, sc := range scores {
		if sc.Score != nil {
			s += *sc.Score
		}
	}
	return s
}

// baselineNsPerOp times sumScores over at least 50ms, so the figure is
// steady even when the benchmark itself runs once (-benchtime=1x).
func baselineNsPerOp(scores []models.RunScore) float64 {
	var sink float64
	n := 0
	start := time.Now()
	for time.Since(start) < 50*time.Millisecond {
		for range 100 {
			sink += sumScores(scores)
		}
		n += 100
	}
	if sink == -1 {
		panic("unreachable")
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// BenchmarkReportCompute times report.Compute on a 1000-sample, 5-round
// run (correlations with 1000 bootstrap resamples, histogram, entropy,
// per-round ensemble, batch bias, decomposition) and reports it as a
// multiple of the baseline, summing the same 5000 scores, timed in the same
// process: the ratio, not the seconds, is what is comparable between
// machines.
func BenchmarkReportCompute(b *testing.B) {
	sr := newSyntheticRun(1000, 5, 10)
	base := baselineNsPerOp(sr.scores)
	var rep *report.Report
	for b.Loop() {
		rep = report.Compute(sr.run, sr.ds, sr.rows, sr.batches, sr.scores)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-sum-baseline")
	b.ReportMetric(base, "baseline-ns")
	if c := rep.Criteria[0]; c.Scored != 5000 || math.IsNaN(c.Pearson.Coef) {
		b.Fatalf("report of the synthetic run: %d scores, Pearson %v", c.Scored, c.Pearson.Coef)
	}
}

// BenchmarkSumScores is the baseline of BenchmarkReportCompute on its own.
func BenchmarkSumScores(b *testing.B) {
	sr := newSyntheticRun(1000, 5, 10)
	var sink float64
	for b.Loop() {
		sink += sumScores(sr.scores)
	}
	if sink == -1 {
		b.Fatal("unreachable")
	}
}
