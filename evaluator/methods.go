package evaluator

import (
	"fmt"
	"math"
)

// Method names an evaluation method. BatchEval is the product's default;
// the others are the baselines of the BatchEval paper, run on the same
// data, rubric and judge so they can be compared.
type Method string

// The methods.
const (
	MethodBatchEval  Method = "batcheval"  // batches of B, N rounds, mean of rounds
	MethodGEval      Method = "geval"      // auto chain-of-thought steps + form filling + probability-weighted score
	MethodLLMEval    Method = "llmeval"    // one call per sample, all criteria as one JSON object
	MethodCloserLook Method = "closerlook" // analyze-rate, one sample per call, mean of n sampled ratings
)

// The methods themselves (their labels, words and how they judge) are
// values of package evaluator/methods, registered there in one place.

// LLMEvalScale is LLM-Eval's score scale.
type LLMEvalScale string

// LLM-Eval's two scales.
const (
	LLMEvalFive    LLMEvalScale = "0-5"   // one decimal, 0 to 5
	LLMEvalHundred LLMEvalScale = "0-100" // integers, 0 to 100
)

// Range returns the scale's bounds.
func (s LLMEvalScale) Range() (lo, hi float64) {
	if s == LLMEvalHundred {
		return 0, 100
	}
	return 0, 5
}

// MethodSettings are the settings of the sample-wise baselines.
type MethodSettings struct {
	// Samples is n: G-Eval's sampled completions when the endpoint has no
	// log-probabilities, and CloserLook's sampled ratings. The papers use 20.
	Samples int `json:"samples"`
	// UseLogprobs lets G-Eval read score probabilities from top_logprobs
	// when the endpoint returns them (falling back to sampling otherwise).
	UseLogprobs bool `json:"use_logprobs"`
	// SampleTemperature is the temperature for sampled estimates (G-Eval's
	// n samples, CloserLook's ratings); the papers use 1.
	SampleTemperature float64 `json:"sample_temperature"`
	// LLMEvalScale is LLM-Eval's scale.
	LLMEvalScale LLMEvalScale `json:"llmeval_scale"`
	// GEvalSteps holds the evaluation steps per criterion name, generated
	// once and editable; empty entries are generated at the run's start.
	GEvalSteps map[string]string `json:"geval_steps,omitempty"`
	// MinAllowedMass is G-Eval's GEvalMinAllowedMass as used by the run,
	// recorded so a report says which threshold its scores passed; 0 in
	// runs stored before it existed (which then use the constant).
	MinAllowedMass float64 `json:"min_allowed_mass,omitempty"`
	// CloserLookTopP and CloserLookScoring are CloserLook's nucleus
	// sampling and rating format. The original analyze-rate setup samples
	// with top_p 1 and asks for integer ratings; runs stored before these
	// were recorded have zeros and keep what they used then (the run's
	// top_p and decimal ratings).
	CloserLookTopP    float64 `json:"closerlook_top_p,omitempty"`
	CloserLookScoring Scoring `json:"closerlook_scoring,omitempty"`
	// MinReadableShare is the fewest readable answers a sampled score
	// (CloserLook's ratings, G-Eval's counted answers) rests on, as a
	// share of the answers asked for (n): a unit whose readable answers
	// are fewer leaves its score missing, with that reason. nil in runs
	// stored before it existed: they scored from any one readable answer
	// and keep doing so (MinReadable). A new run gets
	// DefaultMinReadableShare unless it chose another share (0 is a
	// chosen "no minimum").
	MinReadableShare *float64 `json:"min_readable_share,omitempty"`
	// Learned records what the run found out about the endpoint, once
	// for the run: "geval_logprobs" (available or absent),
	// "llmeval_structured_output" (json_schema, json_object or none). A
	// resumed run starts from it instead of asking again.
	Learned map[string]string `json:"learned,omitempty"`
}

// CloserLookDefaultTopP is the original analyze-rate setup's top_p: no
// nucleus truncation, so n samples spread over the judge's whole
// distribution.
const CloserLookDefaultTopP = 1.0

// DefaultMinReadableShare is the share of the n answers asked for that
// must be readable for a sampled score, on new runs. Why one half: the
// same bar as the answers that must arrive at all (methods.sampledEnough):
// a mean or a share over k readable answers has a standard error growing
// as 1/sqrt(k), so at half of n = 20 it is 1.4 times the one the run's n
// promises, still a usable score; below it the score is a coarser
// estimate than the method the run names (one readable rating of twenty
// is one rating, not a mean of twenty).
const DefaultMinReadableShare = 0.5

// MinReadable is the fewest readable answers of asked that make a sampled
// score under these settings: the share's part of asked, rounded up, and
// never less than one (a mean needs a value). With no share stored (runs
// from before it existed) or a share of 0 it is one.
func (m MethodSettings) MinReadable(asked int) int {
	if m.MinReadableShare == nil || *m.MinReadableShare <= 0 {
		return 1
	}
	// Rounded up on the exact product: a half of 20 is 10, of 5 is 3. The
	// small tolerance keeps 0.3*10 (2.9999999999999996) at 3.
	need := int(math.Ceil(*m.MinReadableShare*float64(asked) - 1e-9))
	return max(need, 1)
}

// DefaultMethodSettings follow the papers: n = 20 samples at temperature 1,
// log-probabilities when available, LLM-Eval on 0-5.
func DefaultMethodSettings() MethodSettings {
	return MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: LLMEvalFive}
}

// MaxSamples is the most completions G-Eval and CloserLook sample per
// sample: five times the papers' n = 20.
const MaxSamples = 100

// Validate reports settings that cannot run.
func (m MethodSettings) Validate() error {
	if m.Samples < 1 || m.Samples > MaxSamples {
		return fmt.Errorf("samples n must be between 1 and %d, got %d", MaxSamples, m.Samples)
	}
	if m.SampleTemperature < 0 || m.SampleTemperature > MaxTemperature {
		return fmt.Errorf("sample temperature must be between 0 and 2, got %g", m.SampleTemperature)
	}
	if m.LLMEvalScale != LLMEvalFive && m.LLMEvalScale != LLMEvalHundred {
		return fmt.Errorf("unknown LLM-Eval scale %q: use 0-5 or 0-100", m.LLMEvalScale)
	}
	if m.CloserLookTopP < 0 || m.CloserLookTopP > 1 {
		return fmt.Errorf("CloserLook's top_p must be in (0, 1], got %g", m.CloserLookTopP)
	}
	if m.MinAllowedMass < 0 || m.MinAllowedMass > 1 {
		return fmt.Errorf("G-Eval's minimum probability on allowed scores must be between 0 and 1, got %g", m.MinAllowedMass)
	}
	if p := m.MinReadableShare; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		return fmt.Errorf("the fewest readable answers for a score must be a share between 0 and 1 of the answers asked for, got %g", *p)
	}
	switch m.CloserLookScoring {
	case "", Decimal, Integer:
	default:
		return fmt.Errorf("unknown CloserLook rating format %q: use integer or decimal", m.CloserLookScoring)
	}
	return nil
}

// TokenAlternatives is one generated token position with the endpoint's
// top alternatives and their log-probabilities (OpenAI top_logprobs).
type TokenAlternatives struct {
	Token   string
	Logprob float64
	Top     []TokenProb
}

// TokenProb is one candidate token and its log-probability.
type TokenProb struct {
	Token   string
	Logprob float64
}
