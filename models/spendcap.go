package models

import (
	"context"
)

// RunSpend is what a run has spent so far and the cap it may not pass.
type RunSpend struct {
	// CostUSD is nil while the price is unknown.
	CostUSD *float64
	// Calls counts every call made, CachedCalls those answered from the
	// judge answer cache (at no cost).
	Calls, CachedCalls int
	// CapUSD is the run's spending cap; nil for none.
	CapUSD *float64
	// ProbePromptTokens and ProbeCompletionTokens are the tokens of the
	// run's probes of a judge that was down (Run.ProbeCalls): not part of
	// CostUSD, but money spent all the same, so the cap counts them.
	ProbePromptTokens, ProbeCompletionTokens int
}

// FindRunSpend reads a run's cost so far, its calls and its cap, fresh
// from the database (the cap can be raised while the run is stopped).
func (db *DB) FindRunSpend(ctx context.Context, runID int64) (RunSpend, error) {
	var sp RunSpend
	err := db.retry(ctx, "read the run's spending", func() error {
		var r Run
		if err := db.Reader(ctx).Select("cost_usd", "calls", "cached_calls", "settings", "probe_prompt_tokens", "probe_completion_tokens").Where("id = ?", runID).Take(&r).Error; err != nil {
			return notFound(err, "run", runID)
		}
		sp = RunSpend{CostUSD: r.CostUSD, Calls: r.Calls, CachedCalls: r.CachedCalls, CapUSD: r.Settings.SpendCapUSD,
			ProbePromptTokens: r.ProbePromptTokens, ProbeCompletionTokens: r.ProbeCompletionTokens}
		return nil
	})
	return sp, err
}
