package web

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
)

// TestSettingTermsExplainEachMethodsLine: the help under a run's settings
// line explains the terms that line shows, for every method and every
// procedure and batch composition, from the methods' own Summary (a
// method that rewords its line makes this fail, not the help go quiet).
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
		{"CloserLook", evaluator.MethodCloserLook, with(nil), []string{"Temperature and top_p", "Seed"}},
		{"G-Eval", evaluator.MethodGEval, with(nil), []string{"Temperature", "Seed"}},
		{"LLM-Eval", evaluator.MethodLLMEval, with(nil), []string{"Temperature", "Seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := methods.For(string(tt.method)).Summary(methods.Run{Settings: tt.settings, MethodSettings: evaluator.DefaultMethodSettings()})
			var got []string
			for _, term := range settingTerms(line) {
				got = append(got, term.Term)
				if term.Meaning == "" {
					t.Errorf("%s has no meaning", term.Term)
				}
			}
			if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
				t.Errorf("line %q\nexplains %q\nwant      %q", line, got, tt.want)
			}
		})
	}
	// Which score sorts the batches is said for the compositions it
	// drives.
	line := methods.For(string(evaluator.MethodBatchEval)).Summary(methods.Run{Settings: with(nil)})
	for _, term := range settingTerms(line) {
		if term.Term == "Heterogeneous batches" && !strings.Contains(term.Meaning, "previous round's score") {
			t.Errorf("heterogeneous batches do not say which score mixes them: %q", term.Meaning)
		}
	}
}
