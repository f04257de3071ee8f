package methods

import (
	"fmt"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// EstimateInput is what an estimate of a run's calls and tokens is made
// from, before the run exists.
type EstimateInput struct {
	// Run holds the settings, the method settings (G-Eval's steps as typed)
	// and the rubric cut down to the chosen criteria.
	Run Run
	// Rows is the number of samples in the dataset.
	Rows int
	// First are the dataset's first samples (at least one; a batch's worth
	// for BatchEval), whose real prompts are measured.
	First []evaluator.Sample
	// Longest are the dataset's longest samples, longest first (a batch's
	// worth for BatchEval), when the caller wants the longest prompt
	// measured (Estimate.LongestPrompt); nil otherwise.
	Longest []evaluator.Sample
	// TokenLimit is the name the judge's requests send the answer's cap
	// under: a reasoning judge (judge.TokenLimitMaxCompletionTokens) is
	// sent every cap 25,000 tokens higher, room for its hidden reasoning
	// that the answer's room and the notes' bounds count
	// (judge.TokenLimit.SentCap). "" is max_tokens.
	TokenLimit judge.TokenLimit
}

// Estimate predicts a run's judge calls and tokens, with notes that say
// how each figure was reached.
type Estimate struct {
	// Calls is the expected number of judge calls; CallsMax, when above
	// it, the most the run can make (an endpoint ignoring n, a fallback).
	Calls, CallsMax                int
	PromptTokens, CompletionTokens int
	CallsNote, PromptNote          string
	CompletionNote                 string
	// LongestPrompt is the longest prompt one call can send, measured on
	// EstimateInput.Longest (0 when that is nil); AnswerRoom is what the
	// call's answer needs beside it: max_tokens when the run sets it, the
	// answer the prompt asks for otherwise. A judge whose context window
	// is smaller than their sum rejects the call, or cuts the prompt.
	LongestPrompt, AnswerRoom int
}

// answerRoom is the cap sent when the run sets one (max tokens, plus the
// reasoning's room for a reasoning judge: judge.TokenLimit.SentCap), the
// expected answer otherwise.
func answerRoom(sends judge.TokenLimit, maxTokens, expected int) int {
	if c := sends.SentCap(maxTokens); c > 0 {
		return c
	}
	return expected
}

// Completion-length assumptions of the estimates. Real answers vary with
// the judge; these are what the prompts ask for.
const (
	// batchTokensPerSample: a two- or three-sentence analysis plus the
	// score, per sample and round of a batch answer.
	batchTokensPerSample = 60
	// gevalStepsTokens: 3 to 5 short numbered steps, about 120 tokens.
	gevalStepsTokens = 120
	// gevalStepsPromptTokens stands for generated steps not yet known when
	// estimating the form prompts: about the length of 4 short steps.
	gevalStepsPromptTokens = 80
	// llmevalTokensPerCriterion: a JSON key, its number and punctuation.
	llmevalTokensPerCriterion = 10
	// closerLookTokens: a short analysis and the rating line per sampled
	// answer, about the batch assumption plus a little.
	closerLookTokens = 80
)

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// countText is "3 criteria" or "1 sample".
func countText(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// Estimate implements Method for BatchEval.
func (BatchEval) Estimate(in EstimateInput) Estimate {
	s, rub, n := in.Run.Settings, in.Run.Rubric, in.Rows
	k := len(rub.Criteria)
	perRound := (n + s.BatchSize - 1) / s.BatchSize
	var e Estimate
	e.Calls = k * s.Rounds * perRound
	for _, c := range rub.Criteria {
		// Each criterion has its own prompt; its first real batch stands
		// for every batch of that criterion.
		e.PromptTokens += evaluator.EstimateTokens(evaluator.BuildBatchPrompt(rub, c, in.First, s)) * s.Rounds * perRound
	}
	e.CompletionTokens = batchTokensPerSample * n * s.Rounds * k
	sampleWise := ""
	if s.BatchSize == 1 {
		sampleWise = " With B = 1 every call judges one sample on its own: sample-wise evaluation, without BatchEval's comparison."
	}
	e.CallsNote = fmt.Sprintf("%s × %d %s × %d %s of up to %d (%s). Up to as many repair calls again if answers lack scores; those are not counted here.%s",
		countText(k, "criterion", "criteria"), s.Rounds, plural(s.Rounds, "round", "rounds"), perRound, plural(perRound, "batch", "batches"), s.BatchSize,
		countText(n, "sample", "samples"), sampleWise)
	e.PromptNote = "Measured on the real first batch of each criterion, times the calls."
	if len(in.Longest) > 0 {
		longest := in.Longest[:min(len(in.Longest), s.BatchSize)]
		for _, c := range rub.Criteria {
			e.LongestPrompt = max(e.LongestPrompt, evaluator.EstimateTokens(evaluator.BuildBatchPrompt(rub, c, longest, s)))
		}
		e.AnswerRoom = answerRoom(in.TokenLimit, s.MaxTokens, batchTokensPerSample*len(longest))
	}
	e.CompletionNote = fmt.Sprintf("Assuming about %d tokens of analysis and score per sample and round.", batchTokensPerSample)
	return e
}

// LargestFittingBatch is the largest batch size, at most the run's, whose
// longest call (prompt built from in.Longest, and its answer) fits a
// context window of window tokens; 0 when not even one sample fits.
func (BatchEval) LargestFittingBatch(in EstimateInput, window int) int {
	s, rub := in.Run.Settings, in.Run.Rubric
	for b := min(len(in.Longest), s.BatchSize); b >= 1; b-- {
		need := 0
		for _, c := range rub.Criteria {
			need = max(need, evaluator.EstimateTokens(evaluator.BuildBatchPrompt(rub, c, in.Longest[:b], s)))
		}
		if need+answerRoom(in.TokenLimit, s.MaxTokens, batchTokensPerSample*b) <= window {
			return b
		}
	}
	return 0
}

// Estimate implements Method for G-Eval.
func (GEval) Estimate(in EstimateInput) Estimate {
	ms, rub, n := in.Run.MethodSettings, in.Run.Rubric, in.Rows
	k := len(rub.Criteria)
	crit, rowsText := countText(k, "criterion", "criteria"), countText(n, "sample", "samples")
	var e Estimate
	e.Calls = k * n
	missing := 0
	for _, c := range rub.Criteria {
		steps := ms.GEvalSteps[c.Name]
		tokens := evaluator.EstimateTokens(evaluator.BuildGEvalFormPrompt(rub, c, steps, in.First[0]))
		if strings.TrimSpace(steps) == "" {
			missing++
			tokens += gevalStepsPromptTokens
			e.PromptTokens += evaluator.EstimateTokens(evaluator.BuildGEvalStepsPrompt(rub, c))
		}
		e.PromptTokens += tokens * n
		if len(in.Longest) > 0 {
			longest := evaluator.EstimateTokens(evaluator.BuildGEvalFormPrompt(rub, c, steps, in.Longest[0]))
			if strings.TrimSpace(steps) == "" {
				longest += gevalStepsPromptTokens
			}
			e.LongestPrompt = max(e.LongestPrompt, longest)
		}
	}
	if len(in.Longest) > 0 {
		e.AnswerRoom = in.TokenLimit.SentCap(gevalFormMaxTokens)
	}
	e.Calls += missing
	e.CompletionTokens = missing * gevalStepsTokens
	stepsNote := ""
	if missing > 0 {
		stepsNote = fmt.Sprintf(" Plus %s to write the evaluation steps of the %s without steps.", countText(missing, "call", "calls"), plural(missing, "criterion", "criteria"))
	}
	if ms.UseLogprobs {
		e.CompletionTokens += gevalFormMaxTokens * k * n
		e.CallsMax = e.Calls + k*n*ms.Samples
		e.CallsNote = fmt.Sprintf("%s × %s, one greedy call each, the score's probabilities read from the log-probabilities.%s "+
			"Where the endpoint returns no log-probabilities (found out once for the run), every sample is scored from n = %d sampled answers instead, one call each if the endpoint also ignores n.",
			crit, rowsText, stepsNote, ms.Samples)
		e.PromptNote = "Measured on the real form prompt of the first sample of each criterion, once per call."
		e.CompletionNote = fmt.Sprintf("The form answer is one integer (at most %d tokens a call)", in.TokenLimit.SentCap(gevalFormMaxTokens))
	} else {
		e.CompletionTokens += gevalFormMaxTokens * k * n * ms.Samples
		e.CallsMax = e.Calls - k*n + k*n*ms.Samples
		e.CallsNote = fmt.Sprintf("%s × %s, each call asking for n = %d sampled answers.%s An endpoint that ignores n (Ollama) needs one call per answer.",
			crit, rowsText, ms.Samples, stepsNote)
		e.PromptNote = "Measured on the real form prompt of the first sample of each criterion; the prompt is paid once per call (n times over if the endpoint ignores n)."
		e.CompletionNote = fmt.Sprintf("%d sampled answers of one integer each (at most %d tokens each)", ms.Samples, in.TokenLimit.SentCap(gevalFormMaxTokens))
	}
	if missing > 0 {
		e.PromptNote += fmt.Sprintf(" Steps not yet written are counted as about %d tokens.", gevalStepsPromptTokens)
		e.CompletionNote += fmt.Sprintf(", and about %d tokens per set of evaluation steps", gevalStepsTokens)
	}
	e.CompletionNote += "."
	return e
}

// Estimate implements Method for LLM-Eval.
func (LLMEval) Estimate(in EstimateInput) Estimate {
	ms, rub, n := in.Run.MethodSettings, in.Run.Rubric, in.Rows
	k := len(rub.Criteria)
	var e Estimate
	e.Calls = n
	e.PromptTokens = evaluator.EstimateTokens(evaluator.BuildLLMEvalPrompt(rub, in.First[0], ms.LLMEvalScale)) * n
	if len(in.Longest) > 0 {
		e.LongestPrompt = evaluator.EstimateTokens(evaluator.BuildLLMEvalPrompt(rub, in.Longest[0], ms.LLMEvalScale))
		e.AnswerRoom = answerRoom(in.TokenLimit, in.Run.Settings.MaxTokens, llmevalTokensPerCriterion*k)
	}
	e.CompletionTokens = llmevalTokensPerCriterion * k * n
	e.CallsNote = fmt.Sprintf("One call per sample (%s) scores all %s at once, asked for as one JSON object (scores written as “Criterion: 3” lines are read too). An endpoint without structured output costs up to 2 refused calls more for the whole run: the mode that works is remembered.",
		countText(n, "sample", "samples"), countText(k, "criterion", "criteria"))
	e.PromptNote = "Measured on the real prompt of the first sample, once per call."
	e.CompletionNote = fmt.Sprintf("A JSON object of about %d tokens per criterion.", llmevalTokensPerCriterion)
	return e
}

// Estimate implements Method for CloserLook.
func (m CloserLook) Estimate(in EstimateInput) Estimate {
	ms, rub, n := in.Run.MethodSettings, in.Run.Rubric, in.Rows
	k := len(rub.Criteria)
	scoring := ms.CloserLookScoring
	if scoring == "" {
		scoring = evaluator.Integer // what Prepare will choose
	}
	var e Estimate
	e.Calls = k * n
	e.CallsMax = k * n * ms.Samples
	for _, c := range rub.Criteria {
		e.PromptTokens += evaluator.EstimateTokens(evaluator.BuildAnalyzeRatePrompt(rub, c, in.First[0], scoring)) * n
		if len(in.Longest) > 0 {
			e.LongestPrompt = max(e.LongestPrompt, evaluator.EstimateTokens(evaluator.BuildAnalyzeRatePrompt(rub, c, in.Longest[0], scoring)))
		}
	}
	if len(in.Longest) > 0 {
		e.AnswerRoom = answerRoom(in.TokenLimit, in.Run.Settings.MaxTokens, closerLookTokens)
	}
	e.CompletionTokens = closerLookTokens * ms.Samples * k * n
	e.CallsNote = fmt.Sprintf("%s × %s, each call asking for n = %d analysed ratings. An endpoint that ignores n (Ollama) needs one call per rating.",
		countText(k, "criterion", "criteria"), countText(n, "sample", "samples"), ms.Samples)
	e.PromptNote = "Measured on the real prompt of the first sample of each criterion; paid once per call (n times over if the endpoint ignores n)."
	e.CompletionNote = fmt.Sprintf("About %d tokens of analysis and rating per answer, %d answers per call.", closerLookTokens, ms.Samples)
	return e
}
