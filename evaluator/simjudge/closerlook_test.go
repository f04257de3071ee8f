package simjudge

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

func TestAnalyzeRateAnswerParses(t *testing.T) {
	s := startServer(t, Options{Seed: 8})
	tests := []struct {
		name   string
		c      evaluator.Criterion
		sample evaluator.Sample
	}{
		{"engaging response, 1-3", criterion("Engagingness", 1, 3), demoSamples()[0]},
		{"one-word response, 1-5", criterion("Coherence", 1, 5), demoSamples()[1]},
		{"empty response, 0-10", criterion("Overall", 0, 10), demoSamples()[3]},
	}
	for _, tt := range tests {
		msgs := evaluator.BuildAnalyzeRatePrompt(rubric(tt.c), tt.c, tt.sample, evaluator.Decimal)
		r := postMethod(t, s, methodRequest(msgs, 1, 20))
		if len(r.Choices) != 20 {
			t.Fatalf("%s: %d choices, want 20", tt.name, len(r.Choices))
		}
		ratings := map[float64]bool{}
		for i, ch := range r.Choices {
			score, analysis, problem := evaluator.ParseAnalyzeRate(ch.Message.Content, tt.c)
			if score == nil || problem != "" {
				t.Errorf("%s, choice %d: problem %q in answer:\n%s", tt.name, i, problem, ch.Message.Content)
				continue
			}
			ratings[*score] = true
			if !strings.Contains(analysis, "Simulated judge") || !strings.Contains(analysis, "word") || strings.Contains(analysis, "Rating") {
				t.Errorf("%s, choice %d: analysis should say it is simulated and name features, without the rating:\n%s", tt.name, i, analysis)
			}
		}
		if len(ratings) < 2 {
			t.Errorf("%s: 20 choices gave the same rating %v: want different noise per choice", tt.name, ratings)
		}
		checkUsage(t, tt.name, msgs, r)
	}
}

func TestAnalyzeRateMissRateDropsRatings(t *testing.T) {
	s := startServer(t, Options{Seed: 1, MissRate: 0.5})
	c := criterion("Engagingness", 1, 3)
	msgs := evaluator.BuildAnalyzeRatePrompt(rubric(c), c, demoSamples()[0], evaluator.Decimal)
	missing := 0
	r := postMethod(t, s, methodRequest(msgs, 1, 20))
	for _, ch := range r.Choices {
		if score, _, problem := evaluator.ParseAnalyzeRate(ch.Message.Content, c); score == nil {
			missing++
			if problem != `no "Rating:" line found` {
				t.Errorf("problem %q, want the missing rating reported", problem)
			}
		}
	}
	if missing == 0 || missing == len(r.Choices) {
		t.Errorf("MissRate 0.5 dropped %d of %d ratings: want some but not all", missing, len(r.Choices))
	}
}
