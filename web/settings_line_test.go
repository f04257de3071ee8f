package web

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// settingsCase is one run whose settings line is checked: a method and the
// changes made to the default settings.
type settingsCase struct {
	name   string
	method evaluator.Method
	s      func(*evaluator.Settings)
	ms     func(*evaluator.MethodSettings)
}

// run is the case's run, from the default settings.
func (c settingsCase) run() models.Run {
	s, ms := evaluator.DefaultSettings(), evaluator.DefaultMethodSettings()
	if c.s != nil {
		c.s(&s)
	}
	if c.ms != nil {
		c.ms(&ms)
	}
	return models.Run{Method: string(c.method), Settings: s, MethodSettings: ms}
}

func capOf(usd float64) func(*evaluator.Settings) {
	return func(s *evaluator.Settings) { s.SpendCapUSD = &usd }
}

// settingsCases are every method crossed with the settings its line shows:
// BatchEval's rounds, batch size, procedure, composition, sort key and
// scoring; top_p set or not; G-Eval with and without log-probabilities;
// CloserLook's own top_p and rating format; LLM-Eval's scale; a spending
// cap or none.
func settingsCases() []settingsCase {
	var out []settingsCase
	caps := []struct {
		name string
		f    func(*evaluator.Settings)
	}{{"no cap", nil}, {"cap 5", capOf(5)}, {"cap 2.5", capOf(2.5)}, {"cap 0.004", capOf(0.004)}}
	both := func(a, b func(*evaluator.Settings)) func(*evaluator.Settings) {
		return func(s *evaluator.Settings) {
			if a != nil {
				a(s)
			}
			if b != nil {
				b(s)
			}
		}
	}
	for _, c := range caps {
		for _, p := range []evaluator.Procedure{evaluator.OneStage, evaluator.TwoStage, evaluator.ThreeStage, ""} {
			for _, comp := range []evaluator.Composition{evaluator.Random, evaluator.Homogeneous, evaluator.Heterogeneous, ""} {
				for _, k := range []evaluator.SortKey{evaluator.SortByPrevious, evaluator.SortByMean} {
					for _, sc := range []evaluator.Scoring{evaluator.Decimal, evaluator.Integer, ""} {
						for _, shape := range [][3]int{{5, 10, 0}, {1, 1, 0}, {3, 2, 1}} {
							for _, topP := range []float64{0.9, 1, 0} {
								out = append(out, settingsCase{
									name:   fmt.Sprintf("batcheval %s %s %s %s %v top_p %g %s", p, comp, k, sc, shape, topP, c.name),
									method: evaluator.MethodBatchEval,
									s: both(c.f, func(s *evaluator.Settings) {
										s.Procedure, s.Composition, s.SortKey, s.Scoring = p, comp, k, sc
										s.Rounds, s.BatchSize, s.TopP = shape[0], shape[1], topP
										s.Temperature, s.Seed = float64(shape[2])*0.35, int64(shape[2]*7)
									}),
								})
							}
						}
					}
				}
			}
		}
		for _, logprobs := range []bool{true, false} {
			for _, n := range []int{20, 1, 7} {
				for _, mass := range []float64{0, 0.5, 0.6, 0.125} {
					for _, temp := range []float64{1, 0, 0.7} {
						out = append(out, settingsCase{
							name:   fmt.Sprintf("geval logprobs %v n %d mass %g temp %g %s", logprobs, n, mass, temp, c.name),
							method: evaluator.MethodGEval, s: c.f,
							ms: func(ms *evaluator.MethodSettings) {
								ms.UseLogprobs, ms.Samples, ms.MinAllowedMass, ms.SampleTemperature = logprobs, n, mass, temp
							},
						})
					}
				}
			}
		}
		for _, scale := range []evaluator.LLMEvalScale{evaluator.LLMEvalFive, evaluator.LLMEvalHundred} {
			for _, temp := range []float64{0, 0.2, 1} {
				for _, topP := range []float64{0.9, 1} {
					out = append(out, settingsCase{
						name:   fmt.Sprintf("llmeval %s temp %g top_p %g %s", scale, temp, topP, c.name),
						method: evaluator.MethodLLMEval,
						s:      both(c.f, func(s *evaluator.Settings) { s.Temperature, s.TopP, s.Seed = temp, topP, 3 }),
						ms:     func(ms *evaluator.MethodSettings) { ms.LLMEvalScale = scale },
					})
				}
			}
		}
		for _, sc := range []evaluator.Scoring{evaluator.Integer, evaluator.Decimal, ""} {
			for _, clTopP := range []float64{0, 1, 0.95} {
				for _, runTopP := range []float64{0.9, 1} {
					for _, n := range []int{20, 3} {
						out = append(out, settingsCase{
							name:   fmt.Sprintf("closerlook %s top_p %g run top_p %g n %d %s", sc, clTopP, runTopP, n, c.name),
							method: evaluator.MethodCloserLook,
							s:      both(c.f, func(s *evaluator.Settings) { s.TopP = runTopP }),
							ms: func(ms *evaluator.MethodSettings) {
								ms.CloserLookScoring, ms.CloserLookTopP, ms.Samples = sc, clTopP, n
							},
						})
					}
				}
			}
		}
	}
	return out
}

// TestSettingsPartsMatchTheOldLine: the settings line written from the
// methods' parts is byte for byte the line written before, and the help
// under it lists the same terms with the same meanings as the help read
// from that line.
func TestSettingsPartsMatchTheOldLine(t *testing.T) {
	seen := map[evaluator.Method]int{}
	for _, c := range settingsCases() {
		run := c.run()
		seen[c.method]++
		old, parts := runSettingsSummary(run), runSettings(run)
		if got := parts.Line(); got != old {
			t.Errorf("%s:\nparts %q\nold   %q", c.name, got, old)
		}
		var oldTerms []methods.Term
		for _, term := range settingTerms(old) {
			oldTerms = append(oldTerms, methods.Term{Term: term.Term, Meaning: term.Meaning})
		}
		if got := parts.Terms(); !reflect.DeepEqual(got, oldTerms) {
			t.Errorf("%s: help\nparts %q\nold   %q", c.name, got, oldTerms)
		}
	}
	for _, m := range methods.All() {
		if seen[m.Name()] == 0 {
			t.Errorf("no case for %s", m.Name())
		}
	}
}
