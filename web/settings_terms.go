package web

import (
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
)

// runSettings is the method's account of the run's settings, part by part
// (methods.Summary), with the run's spending cap after them when it has
// one. Its Line is the settings line of the run page and the shared
// report; its Terms are the "What these settings mean" list under it.
// src, a G-Eval run's count of how its scores were estimated (nil when not
// known), says which scores a sampled-only setting applies to.
func runSettings(r models.Run, src *models.GEvalSources) methods.Summary {
	mr := methods.Run{Settings: r.Settings, MethodSettings: r.MethodSettings, Rubric: r.RubricSnapshot}
	if src != nil {
		mr.Estimated = &methods.Estimated{Logprobs: src.Logprobs, Samples: src.Samples}
	}
	s := runMethod(r).Summary(mr)
	if c := r.Settings.SpendCapUSD; c != nil {
		s = append(s, methods.SummaryPart{Text: "spending cap " + Money(*c), Plain: true})
	}
	return s
}
