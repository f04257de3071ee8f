package methods

import (
	"context"
	"fmt"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

func init() { register(CloserLook{}) }

// CloserLook is CloserLook's analyze-rate (Chiang and Lee, Findings of
// EMNLP 2023): one sample per call, the judge analyses then rates, and the
// mean of n sampled ratings is the score. By default it uses the original
// setup: top_p 1 and integer ratings.
type CloserLook struct{}

// Name implements Method.
func (CloserLook) Name() evaluator.Method { return evaluator.MethodCloserLook }

// Label implements Method.
func (CloserLook) Label() string { return "CloserLook (analyze-rate)" }

// Words implements Method.
func (CloserLook) Words() Words { return Words{Unit: "sample", Units: "samples"} }

// Batched implements Method.
func (CloserLook) Batched() bool { return false }

// Prepare implements Method: the original analyze-rate settings, top_p 1
// and integer ratings, unless the run says otherwise; they are recorded in
// the run's method settings.
func (m CloserLook) Prepare(r *Run) error {
	if err := prepareSampleWise(r, m); err != nil {
		return err
	}
	if r.MethodSettings.CloserLookTopP == 0 {
		r.MethodSettings.CloserLookTopP = evaluator.CloserLookDefaultTopP
	}
	if r.MethodSettings.CloserLookScoring == "" {
		r.MethodSettings.CloserLookScoring = evaluator.Integer
	}
	return nil
}

// Passes implements Method.
func (CloserLook) Passes(rub evaluator.Rubric) [][]int { return perCriterion(rub) }

// Rounds implements Method.
func (CloserLook) Rounds(Run) int { return 1 }

// Plan implements Method.
func (CloserLook) Plan(p Plan) ([][]int, error) { return oneSamplePerUnit(p.N), nil }

// Final implements Method.
func (CloserLook) Final(rounds []*float64) *float64 { return meanOf(rounds) }

// topP is the run's CloserLook top_p; runs stored before it was recorded
// used the run's own top_p.
func (CloserLook) topP(r Run) float64 {
	if p := r.MethodSettings.CloserLookTopP; p > 0 {
		return p
	}
	return r.Settings.TopP
}

// scoring is the run's rating format; "" (older runs) asked for decimals.
func (CloserLook) scoring(r Run) evaluator.Scoring {
	if s := r.MethodSettings.CloserLookScoring; s != "" {
		return s
	}
	return evaluator.Decimal
}

// Summary implements Method.
func (m CloserLook) Summary(r Run) Summary {
	ms := r.MethodSettings
	kind := "decimal ratings may be 3.5 as well as 3 or 4"
	if m.scoring(r) == evaluator.Integer {
		kind = "integer ratings are whole numbers only"
	}
	return readableSummary(Summary{
		explained(fmt.Sprintf("mean of %d sampled %s ratings", ms.Samples, m.scoring(r)),
			Term{"Sampled ratings", fmt.Sprintf("each sample is judged alone: the judge first analyses it, then rates it. The same request is answered %d times and the score is the mean of the ratings that could be read, so one answer's luck weighs little (%s).", ms.Samples, kind)}),
		explained(fmt.Sprintf("temperature %g", ms.SampleTemperature), temperatureTerm(true, true)),
		plain(fmt.Sprintf("top_p %g", m.topP(r))),
		explained(fmt.Sprintf("seed %d", r.Settings.Seed), seedTerm(false)),
	}, ms)
}

// Judge implements Method.
func (m CloserLook) Judge(ctx context.Context, j Completer, u Unit) Outcome {
	ms := u.Run.MethodSettings
	ci := u.Criteria[0]
	crit := u.Run.Rubric.Criteria[ci]
	msgs := evaluator.BuildAnalyzeRatePrompt(u.Run.Rubric, crit, u.Samples[0], m.scoring(u.Run))
	seed := u.Run.Settings.Seed
	o := Outcome{Request: EncodeMessages(msgs), Details: map[string]any{"method": string(evaluator.MethodCloserLook)}}
	texts, err := collect(ctx, j, u, judge.Request{Messages: msgs, Temperature: ms.SampleTemperature, TopP: m.topP(u.Run),
		MaxTokens: u.Run.Settings.MaxTokens, Seed: &seed}, ms.Samples, &o)
	if len(texts) > 0 {
		o.Response = strings.Join(texts, "\n---\n")
	}
	if !takeSamples(&o, ms.Samples, texts, err) {
		return o
	}
	var ratings []*float64
	var read []float64
	var analysis string
	unreadable := 0
	for _, t := range texts {
		v, a, problem := evaluator.ParseAnalyzeRate(t, crit)
		if v == nil {
			unreadable++
			// A few examples are enough to see what went wrong.
			if problem != "" && len(o.Problems) < 5 {
				o.Problems = append(o.Problems, problem)
			}
			continue
		}
		ratings = append(ratings, v)
		read = append(read, *v)
		if analysis == "" {
			analysis = a
		}
	}
	o.Details["ratings"], o.Details["unreadable"] = read, unreadable
	value := meanOf(ratings)
	if !enoughReadable(&o, ms, len(read), ms.Samples) {
		value = nil
	}
	o.Scores = []Score{{Criterion: ci, Sample: 0, Value: value, Analysis: analysis}}
	return o
}

// Note implements Method.
func (CloserLook) Note() string {
	return "one sample per call; the judge analyses, then rates; n ratings averaged"
}

// Reads implements Method: n and the sample temperature; its top_p and
// rating format are the original's (Prepare), not the form's, recorded in
// the run's method settings.
func (CloserLook) Reads() []Setting {
	return []Setting{SettingSeed, SettingSamples, SettingSampleTemperature, SettingMaxTokens, SettingCloserLookTopP, SettingCloserLookScoring, SettingMinReadableShare}
}

// ReadsRun is Reads for a stored run: a run stored before CloserLook
// recorded its own top_p and rating format read the run's top_p (topP);
// its ratings were decimals whatever the run's scoring said (scoring).
func (m CloserLook) ReadsRun(r Run) []Setting {
	out := m.Reads()
	if r.MethodSettings.CloserLookTopP == 0 {
		out = append(out, SettingTopP)
	}
	return out
}

// Setups implements Method: one row, with the launch's settings.
func (m CloserLook) Setups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	return []Setup{{Name: m.Label(), Settings: base, MethodSettings: ms}}
}

// PromptVersion implements Method.
func (CloserLook) PromptVersion() string { return evaluator.CloserLookPromptVersion }

// SamplesAnswers implements Sampler: every sample is scored from n
// sampled ratings.
func (CloserLook) SamplesAnswers() bool { return true }
