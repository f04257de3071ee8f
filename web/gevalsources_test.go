package web

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestGEvalSourcesText: the run page says which way a G-Eval run's scores
// were estimated, and how many each way when it mixed them.
func TestGEvalSourcesText(t *testing.T) {
	run := models.Run{Method: models.MethodGEval, MethodSettings: evaluator.MethodSettings{Samples: 20, UseLogprobs: true}}
	noLogprobs := run
	noLogprobs.MethodSettings.UseLogprobs = false
	for _, tc := range []struct {
		name string
		run  models.Run
		s    *models.GEvalSources
		want string
	}{
		{"another method", run, nil, ""},
		{"nothing scored yet", run, &models.GEvalSources{}, ""},
		{"all from log-probabilities", run, &models.GEvalSources{Logprobs: 12}, "Every score (12) was estimated from the endpoint's log-probabilities."},
		{"none given", run, &models.GEvalSources{Samples: 12}, "Every score (12) was estimated from 20 sampled answers: the endpoint gave no log-probabilities that could be read."},
		{"none asked", noLogprobs, &models.GEvalSources{Samples: 12}, "Every score (12) was estimated from 20 sampled answers (log-probabilities were not asked for)."},
		{"mixed", run, &models.GEvalSources{Logprobs: 9, Samples: 3}, "Scores estimated from the endpoint's log-probabilities: 9 of 12; from 20 sampled answers: 3, whose answer came without log-probabilities or with none that could be read (the judge's calls for each sample, linked from its page, say why)."},
	} {
		if got := gevalSourcesText(tc.run, tc.s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRunSampledUnreadable: a criterion of a sampling method says how many
// of the sampled answers behind its scores could not be read.
func TestRunSampledUnreadable(t *testing.T) {
	for _, tc := range []struct {
		a    models.SampledAnswers
		want string
	}{
		{models.SampledAnswers{}, ""},
		{models.SampledAnswers{Answers: 1200}, "Of the 1,200 answers sampled for this criterion, those of its missing scores included, 0 (0%) could not be read; a score is computed from its sample's readable answers only."},
		{models.SampledAnswers{Answers: 1200, Unreadable: 171}, "Of the 1,200 answers sampled for this criterion, those of its missing scores included, 171 (14%) could not be read; a score is computed from its sample's readable answers only."},
		{models.SampledAnswers{Answers: 2000, Unreadable: 3}, "Of the 2,000 answers sampled for this criterion, those of its missing scores included, 3 (0.2%) could not be read; a score is computed from its sample's readable answers only."},
	} {
		if got := runSampledUnreadable(tc.a); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.a, got, tc.want)
		}
	}
}
