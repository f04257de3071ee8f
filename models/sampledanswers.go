package models

import (
	"context"
	"fmt"
)

// SampledAnswers counts the sampled answers behind a criterion's scores in
// a run of a method that scores a sample from n sampled answers
// (CloserLook's ratings; G-Eval's answers where it sampled): how many came
// to the scored units, and how many of those held nothing readable. A
// score is computed from its unit's readable answers, so a criterion can
// show no unreadable score while many of the answers behind its scores
// could not be read; this is the count that says so.
type SampledAnswers struct {
	Answers, Unreadable int
}

// SampledAnswersOf counts, per criterion index, the sampled answers of a
// run's answered units and the unreadable ones among them, from the
// units' details: "answered" (every sampling unit, methods.takeSamples),
// with "unreadable" (CloserLook) or "total" minus "used" (G-Eval). Units
// that sampled nothing (G-Eval's log-probabilities, other methods) have
// no "answered" and are left out.
func (db *DB) SampledAnswersOf(ctx context.Context, runID int64) (map[int]SampledAnswers, error) {
	num := func(key string) string { return "json_extract(details, '$." + key + "')" }
	if db.Dialect == Postgres {
		num = func(key string) string { return "(details::jsonb->>'" + key + "')::int" }
	}
	var rows []struct {
		CriterionIndex      int
		Answers, Unreadable int
	}
	err := db.Reader(ctx).Model(&RunBatch{}).
		Select("criterion_index, COALESCE(SUM("+num("answered")+"), 0) AS answers, "+
			"COALESCE(SUM(COALESCE("+num("unreadable")+", "+num("total")+" - "+num("used")+", 0)), 0) AS unreadable").
		Where("run_id = ? AND status = ? AND "+num("answered")+" IS NOT NULL", runID, BatchDone).
		Group("criterion_index").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("count the sampled answers of run %d: %w", runID, err)
	}
	out := make(map[int]SampledAnswers, len(rows))
	for _, r := range rows {
		out[r.CriterionIndex] = SampledAnswers{Answers: r.Answers, Unreadable: r.Unreadable}
	}
	return out, nil
}
