package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestGEvalCallsSayWhySampled: the G-Eval run page counts the scores
// estimated from sampled answers "whose answer came without
// log-probabilities or with none that could be read" and says the sample's
// calls say why; they said only "20 sampled answers: the share of answers
// giving each score", for a sample whose log-probabilities were missing as
// for one whose were unusable.
func TestGEvalCallsSayWhySampled(t *testing.T) {
	probs := map[string]any{"1": 0.25, "2": 0.75}
	base := func(extra map[string]any) map[string]any {
		d := map[string]any{"method": "geval", "source": evaluator.GEvalSourceSamples, "probabilities": probs, "used": 18, "total": 20}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
	for _, tc := range []struct {
		name    string
		details map[string]any
		want    string // "" wants no reason
	}{
		{"no log-probabilities came", base(map[string]any{"logprobs_unavailable": true}),
			"(18 of 20 could be read); sampled because the endpoint gave no log-probabilities (for this sample, or for an earlier one of the run, after which the run stops asking for them)"},
		{"log-probabilities unusable", base(map[string]any{"logprobs_unreadable": `the judge wrote "6" and gave the allowed scores (1 to 5) no probability at that position`}),
			`; sampled because the log-probabilities could not be used: the judge wrote "6" and gave the allowed scores (1 to 5) no probability at that position`},
		{"not asked for", base(nil), ""},
		{"from log-probabilities", map[string]any{"source": evaluator.GEvalSourceLogprobs, "probabilities": probs, "logprobs_unavailable": false}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := gevalDetails(tc.details)
			if tc.want == "" {
				if strings.Contains(got, "sampled because") {
					t.Errorf("source %q gives a reason for sampling, want none", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("source %q, want it to say %q", got, tc.want)
			}
		})
	}
}
