package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// PrepareRun fills in what a method implies before a run is stored:
// sample-wise methods make one call per sample (B = 1) in one round, and
// LLM-Eval scores on its own scale, which becomes the criteria's range.
func PrepareRun(run *models.Run) error {
	m := evaluator.Method(run.Method)
	if run.Method == "" {
		m = evaluator.MethodBatchEval
		run.Method = string(m)
	}
	if !m.Valid() {
		return models.Errorf(models.EInvalid, "unknown method %q: use batcheval, geval, llmeval or closerlook", run.Method)
	}
	if m == evaluator.MethodBatchEval {
		return nil
	}
	if run.MethodSettings.Samples == 0 {
		steps := run.MethodSettings.GEvalSteps
		run.MethodSettings = evaluator.DefaultMethodSettings()
		run.MethodSettings.GEvalSteps = steps
	}
	if err := run.MethodSettings.Validate(); err != nil {
		return &models.Error{Code: models.EInvalid, Message: err.Error()}
	}
	run.Settings.Rounds, run.Settings.BatchSize = 1, 1
	if m == evaluator.MethodLLMEval {
		lo, hi := run.MethodSettings.LLMEvalScale.Range()
		crits := make([]evaluator.Criterion, len(run.RubricSnapshot.Criteria))
		for i, c := range run.RubricSnapshot.Criteria {
			c.Lo, c.Hi = lo, hi
			crits[i] = c
		}
		run.RubricSnapshot.Criteria = crits
	}
	return nil
}

// executeSampleWise runs G-Eval, LLM-Eval or CloserLook: one call unit per
// sample (per criterion, except LLM-Eval which scores all criteria at once),
// each stored as a one-sample "batch" as soon as it returns.
func (r *Runner) executeSampleWise(ctx, work context.Context, run models.Run, rows []models.DatasetRow, fields []evaluator.Field, client *judge.Client) error {
	method := evaluator.Method(run.Method)
	passes := len(run.RubricSnapshot.Criteria)
	if method == evaluator.MethodLLMEval {
		passes = 1
	}
	total := passes * len(rows)
	concurrency := max(1, run.JudgeSnapshot.MaxConcurrency)
	for ci := 0; ci < passes; ci++ {
		if err := r.db.SetRunPlan(ctx, run.ID, total, ci, 0); err != nil {
			return err
		}
		var steps string
		if method == evaluator.MethodGEval {
			var err error
			if steps, err = r.gevalSteps(ctx, work, client, &run, ci); err != nil {
				return err
			}
		}
		batches, err := r.db.RoundBatches(ctx, run.ID, ci, 0)
		if err != nil {
			return err
		}
		if len(batches) == 0 {
			plan := make([][]int64, len(rows))
			for i, row := range rows {
				plan[i] = []int64{row.ID}
			}
			if batches, err = r.db.CreateRoundBatches(ctx, run.ID, ci, 0, plan); err != nil {
				return err
			}
		}
		byID := make(map[int64]models.DatasetRow, len(rows))
		for _, row := range rows {
			byID[row.ID] = row
		}
		g, gctx := errgroup.WithContext(work)
		g.SetLimit(concurrency)
		for _, b := range batches {
			if b.Status != models.BatchPending {
				continue
			}
			g.Go(func() error {
				if err := r.stopping(gctx); err != nil {
					return err
				}
				sample := byID[b.RowIDs[0]].Sample(fields)
				calls, stopCalls := callContext(ctx) // not WithoutCancel: see callContext
				defer stopCalls()
				res, err := r.judgeSample(calls, client, run, method, ci, steps, b, sample)
				return r.store(context.WithoutCancel(ctx), res, err)
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if err := r.stopping(work); err != nil {
			return err
		}
	}
	return nil
}

// gevalSteps returns the criterion's evaluation steps, generating them
// with one call (and storing them on the run) when the person gave none.
func (r *Runner) gevalSteps(ctx, work context.Context, client *judge.Client, run *models.Run, ci int) (string, error) {
	crit := run.RubricSnapshot.Criteria[ci]
	if s := strings.TrimSpace(run.MethodSettings.GEvalSteps[crit.Name]); s != "" {
		return s, nil
	}
	if err := r.stopping(work); err != nil {
		return "", err
	}
	msgs := evaluator.BuildGEvalStepsPrompt(run.RubricSnapshot, crit)
	calls, stopCalls := callContext(ctx) // not WithoutCancel: see callContext
	defer stopCalls()
	resp, err := client.Complete(calls, judge.Request{Messages: msgs, Temperature: 0})
	if err != nil {
		if fatal := runLevel(err); fatal != nil {
			return "", fatal
		}
		return "", fmt.Errorf("generate G-Eval steps for %q: %w", crit.Name, err)
	}
	steps, err := evaluator.ParseGEvalSteps(resp.Text())
	if err != nil {
		return "", fmt.Errorf("the judge's evaluation steps for %q could not be read: %w", crit.Name, err)
	}
	if run.MethodSettings.GEvalSteps == nil {
		run.MethodSettings.GEvalSteps = map[string]string{}
	}
	run.MethodSettings.GEvalSteps[crit.Name] = steps
	if err := r.db.SaveRunMethodSettings(ctx, run.ID, run.MethodSettings, resp.PromptTokens, resp.CompletionTokens, Cost(run.JudgeSnapshot, resp.PromptTokens, resp.CompletionTokens)); err != nil {
		return "", err
	}
	return steps, nil
}

// collect asks for n completions, topping up with further calls when the
// endpoint returns fewer choices than asked (Ollama ignores n). At most n
// calls are made in all.
func collect(ctx context.Context, client *judge.Client, req judge.Request, n int, b *models.RunBatch) ([]string, error) {
	var texts []string
	base := req.Seed
	for calls := 0; len(texts) < n && calls < n; calls++ {
		req.N = n - len(texts)
		if base != nil && calls > 0 {
			// A top-up call needs its own seed: an endpoint that ignores n
			// but honours seed (Ollama) would otherwise answer the same
			// completion every time, and n samples would be one.
			s := *base + int64(calls)
			req.Seed = &s
		}
		resp, err := client.Complete(ctx, req)
		b.Calls++
		if err != nil {
			b.Attempts += judge.AttemptsOf(err)
			return texts, err
		}
		b.Attempts += resp.Attempts
		b.PromptTokens += resp.PromptTokens
		b.CompletionTokens += resp.CompletionTokens
		b.LatencyMS += resp.Latency.Milliseconds()
		for _, ch := range resp.Choices {
			texts = append(texts, ch.Text)
		}
	}
	return texts, nil
}

// judgeSample makes one sample's calls for a sample-wise method.
func (r *Runner) judgeSample(ctx context.Context, client *judge.Client, run models.Run, method evaluator.Method, ci int, steps string, b models.RunBatch, sample evaluator.Sample) (models.BatchResult, error) {
	rub := run.RubricSnapshot
	ms := run.MethodSettings
	// The run's seed goes to the judge too, so a reseed changes the
	// endpoint's sampling where it honours seeds.
	seed := run.Settings.Seed
	b.Details = map[string]any{"method": string(method)}
	var scores []models.RunScore
	score := func(ci int, v *float64, analysis string) {
		scores = append(scores, models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: ci, Round: 0, RowID: b.RowIDs[0], Label: 1, Score: v, Analysis: analysis})
	}
	fail := func(err error) (models.BatchResult, error) {
		if fatal := runLevel(err); fatal != nil {
			return models.BatchResult{}, fatal
		}
		b.Status = models.BatchFailed
		b.Error = err.Error()
		b.Problems = append(b.Problems, "the judge gave no usable answer: "+err.Error())
		scores = scores[:0]
		cis := []int{ci}
		if method == evaluator.MethodLLMEval {
			cis = cis[:0]
			for k := range rub.Criteria {
				cis = append(cis, k)
			}
		}
		for _, k := range cis {
			score(k, nil, "")
		}
		return models.BatchResult{Batch: b, Scores: scores, Cost: Cost(run.JudgeSnapshot, b.PromptTokens, b.CompletionTokens)}, nil
	}

	switch method {
	case evaluator.MethodGEval:
		crit := rub.Criteria[ci]
		msgs := evaluator.BuildGEvalFormPrompt(rub, crit, steps, sample)
		b.Request = encodeMessages(msgs)
		var est evaluator.GEvalEstimate
		if ms.UseLogprobs {
			// Greedy, a few tokens: the score is the first token; its
			// alternatives carry the distribution.
			resp, err := client.Complete(ctx, judge.Request{Messages: msgs, Temperature: 0, MaxTokens: 5, Logprobs: true, TopLogprobs: 10, Seed: &seed})
			b.Calls++
			if err != nil {
				b.Attempts += judge.AttemptsOf(err)
				return fail(err)
			}
			b.Attempts += resp.Attempts
			b.PromptTokens += resp.PromptTokens
			b.CompletionTokens += resp.CompletionTokens
			b.LatencyMS += resp.Latency.Milliseconds()
			b.Response = resp.Text()
			if len(resp.Choices) > 0 {
				est = evaluator.GEvalFromLogprobs(toAlternatives(resp.Choices[0].Logprobs), crit)
			}
			if est.Score == nil {
				b.Details["logprobs_unavailable"] = true
			}
		}
		if est.Score == nil {
			texts, err := collect(ctx, client, judge.Request{Messages: msgs, Temperature: ms.SampleTemperature, MaxTokens: 5, Seed: &seed}, ms.Samples, &b)
			if err != nil && len(texts) == 0 {
				return fail(err)
			}
			if b.Response == "" {
				b.Response = strings.Join(texts, "\n---\n")
			}
			est = evaluator.GEvalFromSamples(texts, crit)
		}
		b.Details["source"] = est.Source
		b.Details["probabilities"] = est.Probs
		b.Details["used"], b.Details["total"] = est.Used, est.Total
		if est.Problem != "" {
			b.Problems = append(b.Problems, est.Problem)
		}
		analysis := fmt.Sprintf("Probability-weighted score from %s.", est.Source)
		score(ci, est.Score, analysis)

	case evaluator.MethodCloserLook:
		crit := rub.Criteria[ci]
		msgs := evaluator.BuildAnalyzeRatePrompt(rub, crit, sample)
		b.Request = encodeMessages(msgs)
		texts, err := collect(ctx, client, judge.Request{Messages: msgs, Temperature: ms.SampleTemperature, TopP: run.Settings.TopP, MaxTokens: run.Settings.MaxTokens, Seed: &seed}, ms.Samples, &b)
		if err != nil && len(texts) == 0 {
			return fail(err)
		}
		var ratings []float64
		var analysis string
		unreadable := 0
		for _, t := range texts {
			v, a, problem := evaluator.ParseAnalyzeRate(t, crit)
			if v == nil {
				unreadable++
				if problem != "" && len(b.Problems) < 5 {
					b.Problems = append(b.Problems, problem)
				}
				continue
			}
			ratings = append(ratings, *v)
			if analysis == "" {
				analysis = a
			}
		}
		b.Response = strings.Join(texts, "\n---\n")
		b.Details["ratings"], b.Details["unreadable"] = ratings, unreadable
		var final *float64
		if len(ratings) > 0 {
			m := mean(ratings)
			final = &m
		}
		score(ci, final, analysis)

	case evaluator.MethodLLMEval:
		msgs := evaluator.BuildLLMEvalPrompt(rub, sample, ms.LLMEvalScale)
		b.Request = encodeMessages(msgs)
		req := judge.Request{Messages: msgs, Temperature: run.Settings.Temperature, MaxTokens: run.Settings.MaxTokens,
			JSONSchema: evaluator.LLMEvalSchema(rub, ms.LLMEvalScale), Seed: &seed}
		mode := "json_schema"
		resp, err := client.Complete(ctx, req)
		b.Calls++
		// Endpoints without structured output refuse the schema: fall back
		// to JSON mode, then to plain text, and parse either way.
		for _, next := range []string{"json_object", "none"} {
			var je *judge.Error
			if err == nil || !errors.As(err, &je) || je.Kind != judge.KindBadRequest {
				break
			}
			b.Attempts += judge.AttemptsOf(err)
			req.JSONSchema, req.JSONMode, mode = nil, next == "json_object", next
			resp, err = client.Complete(ctx, req)
			b.Calls++
		}
		if err != nil {
			b.Attempts += judge.AttemptsOf(err)
			return fail(err)
		}
		b.Attempts += resp.Attempts
		b.PromptTokens, b.CompletionTokens = resp.PromptTokens, resp.CompletionTokens
		b.LatencyMS = resp.Latency.Milliseconds()
		b.Response = resp.Text()
		b.Details["structured_output"] = mode
		vals, problems := evaluator.ParseLLMEvalAnswer(b.Response, rub, ms.LLMEvalScale)
		b.Problems = append(b.Problems, problems...)
		for k := range rub.Criteria {
			var v *float64
			if k < len(vals) {
				v = vals[k]
			}
			score(k, v, "")
		}
	default:
		return models.BatchResult{}, fmt.Errorf("method %q is not sample-wise", method)
	}
	b.Status = models.BatchDone
	if b.Problems == nil {
		b.Problems = []string{}
	}
	return models.BatchResult{Batch: b, Scores: scores, Cost: Cost(run.JudgeSnapshot, b.PromptTokens, b.CompletionTokens)}, nil
}

func toAlternatives(lp []judge.TokenLogprob) []evaluator.TokenAlternatives {
	out := make([]evaluator.TokenAlternatives, len(lp))
	for i, t := range lp {
		out[i] = evaluator.TokenAlternatives{Token: t.Token, Logprob: t.Logprob}
		for _, a := range t.Top {
			out[i].Top = append(out[i].Top, evaluator.TokenProb{Token: a.Token, Logprob: a.Logprob})
		}
	}
	return out
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

var _ = time.Second
