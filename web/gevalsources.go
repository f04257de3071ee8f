package web

import (
	"fmt"

	"github.com/batcheval/batcheval/models"
)

// gevalSourcesText says how a G-Eval run's scores were estimated, as
// method.md asks ("report which way was used"): from the endpoint's
// log-probabilities, from n sampled answers, or how many each way when the
// run mixed them (an answer without usable log-probabilities is sampled
// instead). "" when nothing was scored yet, or for another method (nil).
func gevalSourcesText(run models.Run, s *models.GEvalSources) string {
	return gevalSourcesSentence(run, s, " (the judge's calls for each sample, linked from its page, say why)")
}

// gevalSourcesReportText is gevalSourcesText for a read-only report (a
// share link, a downloaded HTML report), which shows no judge's calls.
func gevalSourcesReportText(run models.Run, s *models.GEvalSources) string {
	return gevalSourcesSentence(run, s, "")
}

// gevalSourcesSentence says how a G-Eval run's scores were estimated; why
// says where the reasons for sampling are shown.
func gevalSourcesSentence(run models.Run, s *models.GEvalSources, why string) string {
	if s == nil || s.Logprobs+s.Samples == 0 {
		return ""
	}
	n := run.MethodSettings.Samples
	switch {
	case s.Samples == 0:
		return fmt.Sprintf("Every score (%d) was estimated from the endpoint's log-probabilities.", s.Logprobs)
	case s.Logprobs == 0 && !run.MethodSettings.UseLogprobs:
		return fmt.Sprintf("Every score (%d) was estimated from %d sampled answers (log-probabilities were not asked for).", s.Samples, n)
	case s.Logprobs == 0:
		return fmt.Sprintf("Every score (%d) was estimated from %d sampled answers: the endpoint gave no log-probabilities that could be read.", s.Samples, n)
	}
	return fmt.Sprintf("Scores estimated from the endpoint's log-probabilities: %d of %d; from %d sampled answers: %d, whose answer came without log-probabilities or with none that could be read%s.",
		s.Logprobs, s.Logprobs+s.Samples, n, s.Samples, why)
}
