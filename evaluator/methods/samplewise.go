package methods

import (
	"context"
	"fmt"
	"slices"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// prepareSampleWise is what every one-sample-per-call method implies: the
// papers' defaults when no method settings were given (keeping any
// evaluation steps), valid settings, and one round of one sample per call.
//
// Settings count as not given when n, the sample temperature and the scale
// are all unset; any of them set means the settings were chosen and must
// be valid (n = 0 from a form is refused, not replaced).
//
// Settings the method does not read (m.Reads) are put back to their
// defaults first, so they are neither refused nor kept for it: an
// unreadable LLM-Eval scale on a G-Eval launch was refused as "G-Eval
// settings: unknown LLM-Eval scale".
func prepareSampleWise(r *Run, m Method) error {
	if ms := r.MethodSettings; ms.Samples == 0 && ms.SampleTemperature == 0 && ms.LLMEvalScale == "" {
		steps := r.MethodSettings.GEvalSteps
		r.MethodSettings = evaluator.DefaultMethodSettings()
		r.MethodSettings.GEvalSteps = steps
	}
	reads := m.Reads()
	unread := func(s Setting) bool { return !slices.Contains(reads, s) }
	d, ms := evaluator.DefaultMethodSettings(), &r.MethodSettings
	if unread(SettingLLMEvalScale) {
		ms.LLMEvalScale = d.LLMEvalScale
	}
	if unread(SettingCloserLookTopP) {
		ms.CloserLookTopP = 0
	}
	if unread(SettingCloserLookScoring) {
		ms.CloserLookScoring = ""
	}
	if unread(SettingMinAllowedMass) {
		ms.MinAllowedMass = 0
	}
	if err := r.MethodSettings.Validate(); err != nil {
		return fmt.Errorf("%s settings: %w", m.Label(), err)
	}
	r.Settings.Rounds, r.Settings.BatchSize = 1, 1
	return nil
}

// collect asks for n completions, topping up with further calls when the
// endpoint returns fewer choices than asked (Ollama ignores n). At most n
// calls are made in all; each is counted on o.
func collect(ctx context.Context, j Completer, req judge.Request, n int, o *Outcome) ([]string, error) {
	var texts []string
	base := req.Seed
	for calls := 0; len(texts) < n && calls < n; calls++ {
		req.N = n - len(texts)
		if base != nil && calls > 0 {
			// A top-up call needs its own seed: an endpoint that ignores n
			// but honours seed (Ollama) would otherwise answer the same
			// completion every time, and n samples would be one.
			s := *base + int64(calls)
			req.Seed = &s
		}
		resp, err := j.Complete(ctx, req)
		o.count(resp, err)
		if err != nil {
			return texts, err
		}
		for _, ch := range resp.Choices {
			texts = append(texts, ch.Text)
		}
	}
	return texts, nil
}
