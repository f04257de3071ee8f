package models

import (
	"context"
	"math"
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

// SetRunSpendCap changes the spending cap of a finished run of the
// workspace (nil removes it), so that it can be resumed past the old cap.
// A run still going keeps its cap: cancel it first.
func (db *DB) SetRunSpendCap(ctx context.Context, wsID, runID int64, capUSD *float64) (Run, error) {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return run, err
	}
	if capUSD != nil && !(*capUSD > 0 && !math.IsInf(*capUSD, 0)) {
		return run, Errorf(EInvalid, "the spending cap must be a positive amount of US dollars")
	}
	if !run.Finished() {
		return run, Errorf(EConflict, "run %d is still %s: its spending cap changes once it has stopped", runID, run.Status)
	}
	run.Settings.SpendCapUSD = capUSD
	err = db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ? AND workspace_id = ?", runID, wsID).
		Update("settings", jsonValue(run.Settings)).Error
	return run, err
}
