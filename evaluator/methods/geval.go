package methods

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

func init() { register(GEval{}) }

// GEval is G-Eval (Liu et al., EMNLP 2023): evaluation steps generated
// once per criterion, then one form-filling call per sample whose score is
// the probability-weighted mean of the allowed scores, read from the
// endpoint's log-probabilities or, without them, counted over n samples.
type GEval struct{}

// Memo keys and values of G-Eval.
const (
	memoLogprobs      = "geval_logprobs"
	logprobsAvailable = "available"
	logprobsAbsent    = "absent"
)

// gevalFormMaxTokens leaves room for a score and a little noise ("- 3",
// " 3\n") while keeping the form call a one-token answer in practice.
const gevalFormMaxTokens = 5

// gevalTopLogprobs asks for ten alternatives per position: enough for any
// 1-10 scale, within the API's limit of 20.
const gevalTopLogprobs = 10

// Name implements Method.
func (GEval) Name() evaluator.Method { return evaluator.MethodGEval }

// Label implements Method.
func (GEval) Label() string { return "G-Eval" }

// Words implements Method: one pass, one unit per sample.
func (GEval) Words() Words { return Words{Unit: "sample", Units: "samples"} }

// Batched implements Method.
func (GEval) Batched() bool { return false }

// Prepare implements Method.
func (m GEval) Prepare(r *Run) error {
	if err := prepareSampleWise(r, m); err != nil {
		return err
	}
	for _, c := range r.Rubric.Criteria {
		if len(evaluator.GEvalScores(c)) < 2 {
			return fmt.Errorf("G-Eval needs an integer scale: the range %g to %g of %s holds fewer than two integers (or too many). Score it with another method", c.Lo, c.Hi, c.Name)
		}
	}
	if r.MethodSettings.MinAllowedMass == 0 {
		r.MethodSettings.MinAllowedMass = evaluator.GEvalMinAllowedMass
	}
	return nil
}

// Passes implements Method.
func (GEval) Passes(rub evaluator.Rubric) [][]int { return perCriterion(rub) }

// Rounds implements Method.
func (GEval) Rounds(Run) int { return 1 }

// Plan implements Method.
func (GEval) Plan(p Plan) ([][]int, error) { return oneSamplePerUnit(p.N), nil }

// Final implements Method.
func (GEval) Final(rounds []*float64) *float64 { return meanOf(rounds) }

// Summary implements Method.
func (GEval) Summary(r Run) Summary {
	ms := r.MethodSettings
	src, from := "", fmt.Sprintf("the shares of n sampled answers (%d here) that gave each score", ms.Samples)
	if ms.UseLogprobs {
		src = "log-probabilities when the endpoint gives them, else "
		from = "the odds the endpoint reports for each score it could write (its log-probabilities) when it reports them, else from " + from
	}
	share := strconv.FormatFloat(minMass(ms), 'g', -1, 64)
	return gevalReadableSummary(Summary{
		explained(fmt.Sprintf("probability-weighted form score from %s%d samples at temperature %g", src, ms.Samples, ms.SampleTemperature),
			Term{"Probability-weighted form score", "the judge fills in a short form that asks for the score alone, in whole numbers. Instead of the one number it writes, each allowed score counts as much as the judge was likely to give it (60% on 4 and 40% on 3 gives 3.6), so the scores spread finely and ties are rare. How likely each score is comes from " + from + "."},
			temperatureTerm(true, false)),
		explained(fmt.Sprintf("seed %d", r.Settings.Seed), seedTerm(false)),
		explained("at least "+share+" of the probability on allowed scores when the written score is not one",
			Term{"Least probability on allowed scores", "when the judge writes a score outside the scale (say 6 on a 1 to 5 scale), its odds are still used if the allowed scores together got at least " + share + " of the odds at that place (1 would be all of them); below that the sample is scored from sampled answers instead."}),
	}, ms, r.Estimated)
}

func minMass(ms evaluator.MethodSettings) float64 {
	if ms.MinAllowedMass > 0 {
		return ms.MinAllowedMass
	}
	return evaluator.GEvalMinAllowedMass
}

// Setup implements Setupper: the criterion's evaluation steps, generated
// with one call when the person gave none.
func (GEval) Setup(ctx context.Context, j Completer, r *Run, pass []int) (SetupOutcome, error) {
	crit := r.Rubric.Criteria[pass[0]]
	if s := strings.TrimSpace(r.MethodSettings.GEvalSteps[crit.Name]); s != "" {
		return SetupOutcome{}, nil
	}
	msgs := evaluator.BuildGEvalStepsPrompt(r.Rubric, crit)
	resp, err := j.Complete(ctx, judge.Request{Messages: msgs, Temperature: 0})
	if err != nil {
		// A call that reached the judge is one of the run's calls, as
		// a unit's failed call is (Outcome.count); answers billed but
		// unusable (judge.BilledOf) are counted too.
		p, c := judge.BilledOf(err)
		calls := 0
		if judge.Reached(err) {
			calls = 1
		}
		return SetupOutcome{Calls: calls, PromptTokens: p, CompletionTokens: c}, fmt.Errorf("generate G-Eval steps for %q: %w", crit.Name, err)
	}
	steps, err := evaluator.ParseGEvalSteps(resp.Text())
	if err != nil {
		// The call was answered, and paid for: it is counted even though
		// its answer is of no use.
		return SetupOutcome{Calls: 1, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens},
			fmt.Errorf("the judge's evaluation steps for %q could not be read: %w", crit.Name, err)
	}
	if r.MethodSettings.GEvalSteps == nil {
		r.MethodSettings.GEvalSteps = map[string]string{}
	}
	r.MethodSettings.GEvalSteps[crit.Name] = steps
	return SetupOutcome{Changed: true, Calls: 1, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens}, nil
}

// Judge implements Method. With UseLogprobs, one greedy call asks for the
// score's log-probabilities; whether the endpoint gives them is decided
// once per run (an HTTP 400 to the request, or an answer without
// top_logprobs, means no) and remembered, so later samples go straight to
// sampling. A sample whose log-probabilities cannot be read (see
// GEvalFromLogprobs) is sampled too.
func (GEval) Judge(ctx context.Context, j Completer, u Unit) Outcome {
	ms := u.Run.MethodSettings
	ci := u.Criteria[0]
	crit := u.Run.Rubric.Criteria[ci]
	sample := u.Samples[0]
	msgs := evaluator.BuildGEvalFormPrompt(u.Run.Rubric, crit, ms.GEvalSteps[crit.Name], sample)
	// The run's seed goes to the judge too, so a reseed changes the
	// endpoint's sampling where it honours seeds.
	seed := u.Run.Settings.Seed
	o := Outcome{Request: EncodeMessages(msgs), Details: map[string]any{"method": string(evaluator.MethodGEval)}}
	threshold := minMass(ms)
	o.Details["min_allowed_mass"] = threshold

	var est evaluator.GEvalEstimate
	if ms.UseLogprobs {
		state, mine, err := u.Memo.AwaitAs(ctx, memoLogprobs, u.Lead)
		if err != nil {
			return o.fail(err)
		}
		if state == logprobsAbsent {
			o.Details["logprobs_unavailable"] = true
		} else {
			// Greedy, a few tokens: the score's own position carries the
			// distribution.
			// A refusal (HTTP 400) is this request's answer as much as
			// an answer is: the answer cache keeps it, so that an
			// identical re-run learns it again without calling.
			resp, err := j.Complete(judge.KeepRefusal(ctx), judge.Request{Messages: msgs, Temperature: 0, MaxTokens: gevalFormMaxTokens, Logprobs: true, TopLogprobs: gevalTopLogprobs, Seed: &seed})
			o.count(resp, err)
			var je *judge.Error
			switch {
			case err != nil && errors.As(err, &je) && je.Kind == judge.KindBadRequest:
				// The endpoint refuses logprobs: sample instead, this
				// sample and every later one.
				settle(u.Memo, mine, logprobsAbsent)
				o.Details["logprobs_unavailable"] = true
				o.Problems = append(o.Problems, "the endpoint refused a request with logprobs ("+je.Error()+"); scored by sampling instead")
			case err != nil:
				settle(u.Memo, mine, "")
				return o.fail(err)
			default:
				var tokens []evaluator.TokenAlternatives
				if len(resp.Choices) > 0 {
					tokens = toAlternatives(resp.Choices[0].Logprobs)
				}
				o.Response = resp.Text()
				if !evaluator.HasTopLogprobs(tokens) {
					settle(u.Memo, mine, logprobsAbsent)
					o.Details["logprobs_unavailable"] = true
				} else {
					settle(u.Memo, mine, logprobsAvailable)
					est = evaluator.GEvalFromLogprobs(tokens, crit, threshold)
					o.Details["logprob_mass"] = est.Mass
					if est.Score == nil {
						o.Details["logprobs_unreadable"] = est.Problem
						o.Problems = append(o.Problems, "log-probabilities not used: "+est.Problem+"; scored by sampling instead")
					}
				}
			}
		}
	}
	if est.Score == nil {
		texts, err := collect(ctx, j, u, judge.Request{Messages: msgs, Temperature: ms.SampleTemperature, MaxTokens: gevalFormMaxTokens, Seed: &seed}, ms.Samples, &o)
		if len(texts) > 0 {
			o.Response = strings.Join(texts, "\n---\n")
		}
		if !takeSamples(&o, ms.Samples, texts, err) {
			return o
		}
		est = evaluator.GEvalFromSamples(texts, crit)
		if est.Score != nil && !enoughReadable(&o, ms, est.Used, ms.Samples) {
			est.Score = nil
		}
	}
	o.Details["source"] = est.Source
	o.Details["probabilities"] = est.Probs
	o.Details["used"], o.Details["total"] = est.Used, est.Total
	if est.Problem != "" {
		o.Problems = append(o.Problems, est.Problem)
	}
	o.Scores = []Score{{Criterion: ci, Sample: 0, Value: est.Score, Analysis: fmt.Sprintf("Probability-weighted score from %s.", est.Source)}}
	return o
}

// settle ends a probe the caller owns.
func settle(m *Memo, mine bool, value string) {
	if mine {
		m.Settle(memoLogprobs, value)
	}
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

// Note implements Method.
func (GEval) Note() string {
	return "one sample per call; the judge fills a score form and the score is weighted by its probabilities"
}

// Reads implements Method: G-Eval's log-probability call is greedy, so the
// temperature and top_p are not its; n and the sample temperature are the
// fallback's. Nor is max_tokens: every call asks for at most
// gevalFormMaxTokens. It records the least share on allowed scores it
// used (Prepare).
func (GEval) Reads() []Setting {
	return []Setting{SettingSeed, SettingSamples, SettingSampleTemperature, SettingUseLogprobs, SettingGEvalSteps, SettingMinAllowedMass, SettingMinReadableShare}
}

// Setups implements Method: one row, with the launch's settings.
func (m GEval) Setups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	return []Setup{{Name: m.Label(), Settings: base, MethodSettings: ms}}
}

// PromptVersion implements Method.
func (GEval) PromptVersion() string { return evaluator.GEvalPromptVersion }

// SamplesAnswers implements Sampler: without log-probabilities a sample
// is scored from n sampled answers.
func (GEval) SamplesAnswers() bool { return true }
