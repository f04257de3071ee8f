package models

import (
	"context"
	"fmt"

	"github.com/batcheval/batcheval/evaluator"
)

// GEvalSources counts how a G-Eval run's scores were estimated (method.md:
// "report which way was used"): from the endpoint's log-probabilities, or
// by counting sampled answers where there were none or they could not be
// read. A run can mix both: one sample's answer may come without them.
type GEvalSources struct {
	Logprobs, Samples int
}

// GEvalSourcesOf counts a run's answered units by the source their G-Eval
// estimate records in its details (evaluator.GEvalSourceLogprobs or
// evaluator.GEvalSourceSamples). The details are JSON text written by
// encoding/json in both dialects, so the key and value read the same way
// in SQLite and PostgreSQL; a judge's text inside them is a JSON string,
// whose quotes are escaped and cannot match.
func (db *DB) GEvalSourcesOf(ctx context.Context, runID int64) (GEvalSources, error) {
	like := func(source string) string { return `%"source":"` + source + `"%` }
	var out GEvalSources
	err := db.Reader(ctx).Model(&RunBatch{}).
		Select("COALESCE(SUM(CASE WHEN details LIKE ? THEN 1 ELSE 0 END), 0) AS logprobs, "+
			"COALESCE(SUM(CASE WHEN details LIKE ? THEN 1 ELSE 0 END), 0) AS samples",
			like(evaluator.GEvalSourceLogprobs), like(evaluator.GEvalSourceSamples)).
		Where("run_id = ? AND status = ?", runID, BatchDone).Scan(&out).Error
	if err != nil {
		return GEvalSources{}, fmt.Errorf("count how the scores of run %d were estimated: %w", runID, err)
	}
	return out, nil
}
