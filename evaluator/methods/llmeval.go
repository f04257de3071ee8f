package methods

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

func init() { register(LLMEval{}) }

// LLMEval is LLM-Eval (Lin and Chen, 2023): one call per sample that
// scores every criterion at once as one JSON object, on its own scale.
type LLMEval struct{}

// The structured-output modes, most to least strict; memoLLMEvalMode
// remembers the first one the endpoint accepted.
const (
	modeSchema      = "json_schema"
	modeJSONObject  = "json_object"
	modeNone        = "none"
	memoLLMEvalMode = "llmeval_structured_output"
)

var llmevalModes = []string{modeSchema, modeJSONObject, modeNone}

// Name implements Method.
func (LLMEval) Name() evaluator.Method { return evaluator.MethodLLMEval }

// Label implements Method.
func (LLMEval) Label() string { return "LLM-Eval" }

// Words implements Method.
func (LLMEval) Words() Words { return Words{Unit: "sample", Units: "samples"} }

// Batched implements Method.
func (LLMEval) Batched() bool { return false }

// Prepare implements Method: LLM-Eval scores on its own scale, which
// becomes every criterion's range.
func (m LLMEval) Prepare(r *Run) error {
	if ms := r.MethodSettings; ms.Samples != 0 || ms.SampleTemperature != 0 || ms.LLMEvalScale != "" {
		// n and the sample temperature mean nothing to LLM-Eval: keep the
		// defaults rather than refuse a run over fields it ignores.
		d := evaluator.DefaultMethodSettings()
		r.MethodSettings.Samples, r.MethodSettings.SampleTemperature = d.Samples, d.SampleTemperature
	}
	if err := prepareSampleWise(r, m); err != nil {
		return err
	}
	lo, hi := r.MethodSettings.LLMEvalScale.Range()
	crits := make([]evaluator.Criterion, len(r.Rubric.Criteria))
	for i, c := range r.Rubric.Criteria {
		if c.RubricScale == nil {
			// The rubric's own range is what people rate on: kept, so
			// reviews are asked for on it (a prepared run's, prepared
			// again, already holds it).
			c.RubricScale = &evaluator.Scale{Lo: c.Lo, Hi: c.Hi}
		}
		c.Lo, c.Hi = lo, hi
		crits[i] = c
	}
	r.Rubric.Criteria = crits
	return nil
}

// DefaultTemperature implements TemperatureChooser: LLM-Eval's paper found
// greedy decoding best.
func (LLMEval) DefaultTemperature() float64 { return 0 }

// Passes implements Method: every criterion in one pass.
func (LLMEval) Passes(rub evaluator.Rubric) [][]int {
	all := make([]int, len(rub.Criteria))
	for i := range all {
		all[i] = i
	}
	return [][]int{all}
}

// Rounds implements Method.
func (LLMEval) Rounds(Run) int { return 1 }

// Plan implements Method.
func (LLMEval) Plan(p Plan) ([][]int, error) { return oneSamplePerUnit(p.N), nil }

// Final implements Method.
func (LLMEval) Final(rounds []*float64) *float64 { return meanOf(rounds) }

// Summary implements Method.
func (LLMEval) Summary(r Run) Summary {
	scale := r.MethodSettings.LLMEvalScale
	return Summary{
		explained(fmt.Sprintf("every criterion in one JSON answer on the %s scale", scale),
			Term{"One JSON answer", fmt.Sprintf("one call per sample scores every criterion at once, asked for as structured data (one JSON object) on the %s scale rather than each criterion's own range; correlations with your ratings are unaffected. An answer that writes its scores as lines instead (“Coherence: 3”) is read from those lines, also when a broken JSON object stands beside them; a criterion whose line and object disagree is missing, never guessed.", scale)}),
		explained(fmt.Sprintf("temperature %g", r.Settings.Temperature), temperatureTerm(false, false)),
		explained(fmt.Sprintf("seed %d", r.Settings.Seed), seedTerm(false)),
	}
}

// Judge implements Method. Endpoints without structured output refuse the
// schema (HTTP 400): the request falls back to JSON mode, then to plain
// text, and the answer is parsed either way. The mode that worked is
// remembered for the run, so later samples take one call each.
func (LLMEval) Judge(ctx context.Context, j Completer, u Unit) Outcome {
	rub := u.Run.Rubric
	ms := u.Run.MethodSettings
	msgs := evaluator.BuildLLMEvalPrompt(rub, u.Samples[0], ms.LLMEvalScale)
	seed := u.Run.Settings.Seed
	o := Outcome{Request: EncodeMessages(msgs), Details: map[string]any{"method": string(evaluator.MethodLLMEval)}}

	known, mine, err := u.Memo.AwaitAs(ctx, memoLLMEvalMode, u.Lead)
	if err != nil {
		return o.fail(err)
	}
	modes := llmevalModes
	if i := slices.Index(llmevalModes, known); i >= 0 {
		modes = llmevalModes[i:]
	}
	var resp judge.Response
	mode := ""
	for _, m := range modes {
		mode = m
		req := judge.Request{Messages: msgs, Temperature: u.Run.Settings.Temperature, MaxTokens: u.Run.Settings.MaxTokens, Seed: &seed}
		switch m {
		case modeSchema:
			req.JSONSchema = evaluator.LLMEvalSchema(rub, ms.LLMEvalScale)
		case modeJSONObject:
			req.JSONMode = true
		}
		cctx := ctx
		if m != modeNone {
			// A refusal of a structured-output mode says the endpoint
			// lacks it: the answer cache keeps it, so that an identical
			// re-run learns it again without calling.
			cctx = judge.KeepRefusal(ctx)
		}
		resp, err = j.Complete(cctx, req)
		o.count(resp, err)
		var je *judge.Error
		if err == nil || !errors.As(err, &je) || je.Kind != judge.KindBadRequest || m == modeNone {
			break
		}
	}
	if err != nil {
		if mine {
			// A refusal of every mode says nothing certain either: let
			// the next sample try again.
			u.Memo.Settle(memoLLMEvalMode, "")
		}
		return o.fail(err)
	}
	if mine {
		u.Memo.Settle(memoLLMEvalMode, mode)
	}
	o.Response = resp.Text()
	o.Details["structured_output"] = mode
	vals, reasons, problems := evaluator.ParseLLMEvalAnswer(o.Response, rub, ms.LLMEvalScale)
	o.Problems = append(o.Problems, problems...)
	for k := range rub.Criteria {
		var v *float64
		var why string
		if k < len(vals) {
			v, why = vals[k], reasons[k]
		}
		// The judge's reason for a criterion, when it gave one
		// ({"Coherence": {"score": 3, "reason": "..."}}), is the score's
		// analysis, as the batched methods keep theirs.
		o.Scores = append(o.Scores, Score{Criterion: k, Sample: 0, Value: v, Analysis: why})
	}
	return o
}

// Note implements Method.
//
// The judge is asked for one JSON object; an answer that writes its scores
// as lines ("Coherence: 3") is read too, so the note says both
// (evaluator.ParseLLMEvalAnswer).
func (LLMEval) Note() string {
	return "one call per sample scores all criteria at once, asked for as one JSON object; “Criterion: 3” lines are read too"
}

// Reads implements Method: the temperature (greedy by default) and the
// scale.
func (LLMEval) Reads() []Setting {
	return []Setting{SettingTemperature, SettingSeed, SettingLLMEvalScale, SettingMaxTokens}
}

// Setups implements Method: one row, greedy as its paper found best.
func (m LLMEval) Setups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	base.Temperature = m.DefaultTemperature()
	return []Setup{{Name: m.Label(), Settings: base, MethodSettings: ms}}
}

// PromptVersion implements Method.
func (LLMEval) PromptVersion() string { return evaluator.LLMEvalPromptVersion }
