package web

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRunSettingsLine: the settings line of the run page and the shared
// report, written from the methods' parts, is byte for byte the line
// earlier versions wrote (one part per setting, " · " between them, the
// spending cap last), and the help under it explains the terms it shows
// in the line's order. The lines were recorded from the version that
// parsed them back into the help; a change to any of them changes what
// people read, and should be a choice.
func TestRunSettingsLine(t *testing.T) {
	capOf := func(usd float64) func(*evaluator.Settings) {
		return func(s *evaluator.Settings) { s.SpendCapUSD = &usd }
	}
	batchTerms := func(procedure, composition, scoring string) []string {
		return []string{"Rounds × batches", "Temperature and top_p", "Seed", procedure, composition, scoring}
	}
	gevalTerms := []string{"Probability-weighted form score", "Temperature", "Seed", "Least probability on allowed scores"}
	tests := []struct {
		name   string
		method evaluator.Method
		s      func(*evaluator.Settings)
		ms     func(*evaluator.MethodSettings)
		line   string
		terms  []string
	}{
		{"BatchEval defaults", evaluator.MethodBatchEval, nil, nil,
			"5 rounds × batches of 10 · temperature 0.2 · top_p 0.9 · seed 1 · two-stage prompt · heterogeneous batches sorted by previous round's score · decimal scores",
			batchTerms("Two-stage prompt", "Heterogeneous batches", "Decimal scores")},
		{"BatchEval defaults, spending cap", evaluator.MethodBatchEval, capOf(5), nil,
			"5 rounds × batches of 10 · temperature 0.2 · top_p 0.9 · seed 1 · two-stage prompt · heterogeneous batches sorted by previous round's score · decimal scores · spending cap $5.00",
			batchTerms("Two-stage prompt", "Heterogeneous batches", "Decimal scores")},
		{"one stage, random, running mean, integer, 1 round of 1", evaluator.MethodBatchEval, func(s *evaluator.Settings) {
			s.Procedure, s.Composition, s.SortKey, s.Scoring = evaluator.OneStage, evaluator.Random, evaluator.SortByMean, evaluator.Integer
			s.Rounds, s.BatchSize, s.Temperature, s.TopP, s.Seed = 1, 1, 0, 1, 0
		}, nil,
			"1 round × batches of 1 · temperature 0 · top_p 1 · seed 0 · one-stage prompt · random batches · integer scores",
			batchTerms("One-stage prompt", "Random batches", "Integer scores")},
		{"three stage, homogeneous, cap with cents", evaluator.MethodBatchEval, func(s *evaluator.Settings) {
			s.Procedure, s.Composition = evaluator.ThreeStage, evaluator.Homogeneous
			s.Rounds, s.BatchSize, s.Temperature, s.Seed = 3, 2, 0.35, 7
			capOf(2.5)(s)
		}, nil,
			"3 rounds × batches of 2 · temperature 0.35 · top_p 0.9 · seed 7 · three-stage prompt · homogeneous batches sorted by previous round's score · decimal scores · spending cap $2.50",
			batchTerms("Three-stage prompt", "Homogeneous batches", "Decimal scores")},
		{"heterogeneous by running mean", evaluator.MethodBatchEval, func(s *evaluator.Settings) { s.SortKey = evaluator.SortByMean }, nil,
			"5 rounds × batches of 10 · temperature 0.2 · top_p 0.9 · seed 1 · two-stage prompt · heterogeneous batches sorted by running mean score · decimal scores",
			batchTerms("Two-stage prompt", "Heterogeneous batches", "Decimal scores")},
		{"top_p not set (older run)", evaluator.MethodBatchEval, func(s *evaluator.Settings) { s.TopP = 0 }, nil,
			"5 rounds × batches of 10 · temperature 0.2 · top_p 0 · seed 1 · two-stage prompt · heterogeneous batches sorted by previous round's score · decimal scores",
			batchTerms("Two-stage prompt", "Heterogeneous batches", "Decimal scores")},
		{"settings this version does not know", evaluator.MethodBatchEval, func(s *evaluator.Settings) { s.Procedure, s.Composition, s.Scoring = "", "", "" }, nil,
			"5 rounds × batches of 10 · temperature 0.2 · top_p 0.9 · seed 1 · -stage prompt ·  batches sorted by previous round's score ·  scores",
			[]string{"Rounds × batches", "Temperature and top_p", "Seed"}},
		{"G-Eval defaults (log-probabilities)", evaluator.MethodGEval, nil, nil,
			"probability-weighted form score from log-probabilities when the endpoint gives them, else 20 samples at temperature 1 · seed 1 · at least 0.5 of the probability on allowed scores when the written score is not one",
			gevalTerms},
		{"G-Eval sampled, own share, tiny cap", evaluator.MethodGEval, capOf(0.004), func(ms *evaluator.MethodSettings) {
			ms.UseLogprobs, ms.Samples, ms.MinAllowedMass, ms.SampleTemperature = false, 7, 0.6, 0.7
		},
			"probability-weighted form score from 7 samples at temperature 0.7 · seed 1 · at least 0.6 of the probability on allowed scores when the written score is not one · spending cap $0.004",
			gevalTerms},
		{"G-Eval share as set, not rounded", evaluator.MethodGEval, nil, func(ms *evaluator.MethodSettings) { ms.MinAllowedMass = 0.125 },
			"probability-weighted form score from log-probabilities when the endpoint gives them, else 20 samples at temperature 1 · seed 1 · at least 0.125 of the probability on allowed scores when the written score is not one",
			gevalTerms},
		{"LLM-Eval defaults", evaluator.MethodLLMEval, nil, nil,
			"every criterion in one JSON answer on the 0-5 scale · temperature 0.2 · seed 1",
			[]string{"One JSON answer", "Temperature", "Seed"}},
		{"LLM-Eval 0-100, greedy, cap", evaluator.MethodLLMEval, func(s *evaluator.Settings) {
			s.Temperature, s.Seed = 0, 3
			capOf(5)(s)
		}, func(ms *evaluator.MethodSettings) { ms.LLMEvalScale = evaluator.LLMEvalHundred },
			"every criterion in one JSON answer on the 0-100 scale · temperature 0 · seed 3 · spending cap $5.00",
			[]string{"One JSON answer", "Temperature", "Seed"}},
		{"CloserLook older run (run's top_p, decimal)", evaluator.MethodCloserLook, nil, nil,
			"mean of 20 sampled decimal ratings · temperature 1 · top_p 0.9 · seed 1",
			[]string{"Sampled ratings", "Temperature and top_p", "Seed"}},
		{"CloserLook original setup", evaluator.MethodCloserLook, nil, func(ms *evaluator.MethodSettings) {
			ms.CloserLookTopP, ms.CloserLookScoring = 1, evaluator.Integer
		},
			"mean of 20 sampled integer ratings · temperature 1 · top_p 1 · seed 1",
			[]string{"Sampled ratings", "Temperature and top_p", "Seed"}},
		{"CloserLook own top_p, decimal, n 3, cap", evaluator.MethodCloserLook, capOf(2.5), func(ms *evaluator.MethodSettings) {
			ms.CloserLookTopP, ms.CloserLookScoring, ms.Samples = 0.95, evaluator.Decimal, 3
		},
			"mean of 3 sampled decimal ratings · temperature 1 · top_p 0.95 · seed 1 · spending cap $2.50",
			[]string{"Sampled ratings", "Temperature and top_p", "Seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ms := evaluator.DefaultSettings(), evaluator.DefaultMethodSettings()
			if tt.s != nil {
				tt.s(&s)
			}
			if tt.ms != nil {
				tt.ms(&ms)
			}
			sum := runSettings(models.Run{Method: string(tt.method), Settings: s, MethodSettings: ms}, nil)
			if got := sum.Line(); got != tt.line {
				t.Errorf("line\n got %q\nwant %q", got, tt.line)
			}
			var got []string
			for _, term := range sum.Terms() {
				got = append(got, term.Term)
			}
			if strings.Join(got, " | ") != strings.Join(tt.terms, " | ") {
				t.Errorf("help explains %q, want %q", got, tt.terms)
			}
		})
	}
}
