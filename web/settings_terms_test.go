package web

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
)

// TestSettingTermsExplainEachMethodsLine: the help under a run's settings
// line explains the terms that line shows, for every method and every
// procedure and batch composition, from the methods' own Summary, whose
// parts carry their meanings.
func TestSettingTermsExplainEachMethodsLine(t *testing.T) {
	with := func(f func(*evaluator.Settings)) evaluator.Settings {
		s := evaluator.DefaultSettings()
		if f != nil {
			f(&s)
		}
		return s
	}
	tests := []struct {
		name     string
		method   evaluator.Method
		settings evaluator.Settings
		want     []string // terms, in the line's order
	}{
		{"BatchEval defaults", evaluator.MethodBatchEval, with(nil),
			[]string{"Rounds × batches", "Temperature and top_p", "Seed", "Two-stage prompt", "Heterogeneous batches", "Decimal scores"}},
		{"one stage, random, integer", evaluator.MethodBatchEval, with(func(s *evaluator.Settings) {
			s.Procedure, s.Composition, s.Scoring = evaluator.OneStage, evaluator.Random, evaluator.Integer
		}), []string{"Rounds × batches", "Temperature and top_p", "Seed", "One-stage prompt", "Random batches", "Integer scores"}},
		{"three stage, homogeneous", evaluator.MethodBatchEval, with(func(s *evaluator.Settings) {
			s.Procedure, s.Composition = evaluator.ThreeStage, evaluator.Homogeneous
		}), []string{"Rounds × batches", "Temperature and top_p", "Seed", "Three-stage prompt", "Homogeneous batches", "Decimal scores"}},
		{"CloserLook", evaluator.MethodCloserLook, with(nil), []string{"Sampled ratings", "Temperature and top_p", "Seed"}},
		{"G-Eval", evaluator.MethodGEval, with(nil), []string{"Probability-weighted form score", "Temperature", "Seed", "Least probability on allowed scores"}},
		{"G-Eval without log-probabilities", evaluator.MethodGEval, with(nil), []string{"Probability-weighted form score", "Temperature", "Seed", "Least probability on allowed scores"}},
		{"LLM-Eval", evaluator.MethodLLMEval, with(nil), []string{"One JSON answer", "Temperature", "Seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := evaluator.DefaultMethodSettings()
			if strings.HasSuffix(tt.name, "without log-probabilities") {
				ms.UseLogprobs = false
			}
			sum := methods.For(string(tt.method)).Summary(methods.Run{Settings: tt.settings, MethodSettings: ms})
			var got []string
			for _, term := range sum.Terms() {
				got = append(got, term.Term)
				if term.Meaning == "" {
					t.Errorf("%s has no meaning", term.Term)
				}
			}
			if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
				t.Errorf("line %q\nexplains %q\nwant      %q", sum.Line(), got, tt.want)
			}
		})
	}
	// The sample-wise methods' terms say what their figures are: n, where
	// the probabilities come from, the share on allowed scores, the scale;
	// their temperature is that of the sampled answers.
	meanings := func(method evaluator.Method, ms evaluator.MethodSettings) map[string]string {
		out := map[string]string{}
		for _, term := range methods.For(string(method)).Summary(methods.Run{Settings: with(nil), MethodSettings: ms}).Terms() {
			out[term.Term] = term.Meaning
		}
		return out
	}
	ms := evaluator.DefaultMethodSettings()
	ms.Samples, ms.MinAllowedMass, ms.CloserLookScoring = 12, 0.6, evaluator.Integer
	noLogprobs := ms
	noLogprobs.UseLogprobs = false
	llm100 := ms
	llm100.LLMEvalScale = evaluator.LLMEvalHundred
	for _, c := range []struct {
		method evaluator.Method
		ms     evaluator.MethodSettings
		term   string
		want   []string
		not    []string
	}{
		{evaluator.MethodGEval, ms, "Probability-weighted form score", []string{"each allowed score counts as much as the judge was likely to give it", "log-probabilities", "n sampled answers (12 here)"}, nil},
		{evaluator.MethodGEval, noLogprobs, "Probability-weighted form score", []string{"n sampled answers (12 here)"}, []string{"log-probabilities"}},
		{evaluator.MethodGEval, ms, "Temperature", []string{"n sampled answers", "must differ"}, nil},
		{evaluator.MethodGEval, ms, "Least probability on allowed scores", []string{"at least 0.6 of the odds", "outside the scale", "scored from sampled answers instead"}, nil},
		{evaluator.MethodCloserLook, ms, "Sampled ratings", []string{"first analyses it, then rates it", "answered 12 times", "mean of the ratings", "whole numbers only"}, nil},
		{evaluator.MethodCloserLook, ms, "Temperature and top_p", []string{"n sampled answers", "likeliest choices"}, nil},
		{evaluator.MethodCloserLook, ms, "Seed", []string{"sent with every call"}, []string{"batch"}},
		{evaluator.MethodLLMEval, llm100, "One JSON answer", []string{"every criterion at once", "0-100 scale"}, nil},
		{evaluator.MethodLLMEval, ms, "Temperature", []string{"Low values give steadier scores"}, []string{"sampled"}},
	} {
		m := meanings(c.method, c.ms)[c.term]
		for _, w := range c.want {
			if !strings.Contains(m, w) {
				t.Errorf("%s %s: %q lacks %q", c.method, c.term, m, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(m, w) {
				t.Errorf("%s %s: %q should not say %q", c.method, c.term, m, w)
			}
		}
	}

	// Which score sorts the batches is said for the compositions it
	// drives.
	for _, term := range methods.For(string(evaluator.MethodBatchEval)).Summary(methods.Run{Settings: with(nil)}).Terms() {
		if term.Term == "Heterogeneous batches" && !strings.Contains(term.Meaning, "previous round's score") {
			t.Errorf("heterogeneous batches do not say which score mixes them: %q", term.Meaning)
		}
	}
}
