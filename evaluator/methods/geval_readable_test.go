package methods

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestGEvalSettingsSayTheReadableMinimumWhereItApplies: a G-Eval run's
// settings stated its fewest readable answers for a score as if every
// score were sampled, though a run that reads log-probabilities applies it
// only to the scores it sampled. It is said plainly of a run that only
// samples, of the sampled scores of a run that did both, not at all of a
// run whose every score came from log-probabilities, and as applying where
// it samples while the run's scores are not counted yet.
func TestGEvalSettingsSayTheReadableMinimumWhereItApplies(t *testing.T) {
	const plain = "a score needs a half of the 20 answers readable (at least 10)"
	cases := []struct {
		name     string
		logprobs bool
		est      *Estimated
		want     string // "" when the line must not state the minimum
	}{
		{"samples only", false, nil, " · " + plain},
		{"log-probabilities, every score from them", true, &Estimated{Logprobs: 30}, ""},
		{"log-probabilities, some sampled", true, &Estimated{Logprobs: 27, Samples: 3}, " · for the 3 sampled scores (the other 27 from log-probabilities), " + plain},
		{"log-probabilities, every score sampled", true, &Estimated{Samples: 30}, " · " + plain},
		{"log-probabilities, not scored yet", true, nil, " · where it samples instead of reading log-probabilities, " + plain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms := evaluator.DefaultMethodSettings()
			ms.Samples, ms.UseLogprobs = 20, tc.logprobs
			half := 0.5
			ms.MinReadableShare = &half
			line := GEval{}.Summary(Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Estimated: tc.est}).Line()
			if tc.want == "" {
				if strings.Contains(line, "answers readable") {
					t.Errorf("line %q states the readable minimum, which never applied", line)
				}
				return
			}
			if !strings.Contains(line, tc.want) {
				t.Errorf("line %q does not say %q", line, tc.want)
			}
		})
	}
}
