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

// SampleWiseCounts are what a sample-wise run's answered units record in
// their details that the run page and the JSON export count: G-Eval's
// sources over the whole run, and the sampled answers per criterion index
// (criteria without any are absent).
type SampleWiseCounts struct {
	Sources GEvalSources
	Answers map[int]SampledAnswers
}

// SampleWiseCountsOf counts a run's answered units in one scan of their
// details: by the source their G-Eval estimate records
// (evaluator.GEvalSourceLogprobs, evaluator.GEvalSourceSamples), matched
// in the JSON text, which encoding/json writes the same way in both
// dialects (a judge's text inside it is a JSON string, whose quotes are
// escaped and cannot match); and the sampled answers, read as JSON per
// dialect: "answered" (every sampling unit, methods.takeSamples), with
// "unreadable" (CloserLook) or "total" minus "used" (G-Eval). Units that
// sampled nothing (G-Eval's log-probabilities, other methods) have no
// "answered" and add no answers.
func (db *DB) SampleWiseCountsOf(ctx context.Context, runID int64) (SampleWiseCounts, error) {
	// PostgreSQL parses each unit's JSON once, in a materialized inner
	// query (cast at each of the four reads, it took 1.5 times as long);
	// SQLite reads the text where it is (json_extract keeps the JSON it
	// parsed last): an inner query there cost 2.1 times as much.
	like := func(source string) string { return `%"source":"` + source + `"%` }
	args := []any{like(evaluator.GEvalSourceLogprobs), like(evaluator.GEvalSourceSamples)}
	from, num := "run_batches", func(key string) string { return "json_extract(details, '$." + key + "')" }
	if db.Dialect == Postgres {
		from = "(SELECT run_id, status, criterion_index, details, details::jsonb AS j FROM run_batches WHERE run_id = ? AND status = ? OFFSET 0) AS u"
		num = func(key string) string { return "(j->>'" + key + "')::int" }
		args = append(args, runID, BatchDone)
	}
	var rows []struct {
		CriterionIndex                         int
		Logprobs, Samples, Answers, Unreadable int
	}
	err := db.Reader(ctx).Raw("SELECT criterion_index, "+
		"COALESCE(SUM(CASE WHEN details LIKE ? THEN 1 ELSE 0 END), 0) AS logprobs, "+
		"COALESCE(SUM(CASE WHEN details LIKE ? THEN 1 ELSE 0 END), 0) AS samples, "+
		"COALESCE(SUM("+num("answered")+"), 0) AS answers, "+
		"COALESCE(SUM(CASE WHEN "+num("answered")+" IS NOT NULL THEN COALESCE("+num("unreadable")+", "+num("total")+" - "+num("used")+", 0) END), 0) AS unreadable "+
		"FROM "+from+" WHERE run_id = ? AND status = ? GROUP BY criterion_index",
		append(args, runID, BatchDone)...).Scan(&rows).Error
	if err != nil {
		return SampleWiseCounts{}, fmt.Errorf("count the answers of run %d: %w", runID, err)
	}
	out := SampleWiseCounts{Answers: map[int]SampledAnswers{}}
	for _, r := range rows {
		out.Sources.Logprobs += r.Logprobs
		out.Sources.Samples += r.Samples
		if r.Answers > 0 {
			out.Answers[r.CriterionIndex] = SampledAnswers{Answers: r.Answers, Unreadable: r.Unreadable}
		}
	}
	return out, nil
}

// TooFewReadableUnits are the ids of a run's answered units whose score is
// missing because too few of their sampled answers could be read (their
// details say "too_few_readable": methods.enoughReadable), matched in the
// JSON text as SampleWiseCountsOf matches the sources.
func (db *DB) TooFewReadableUnits(ctx context.Context, runID int64) ([]int64, error) {
	var ids []int64
	err := db.Reader(ctx).Model(&RunBatch{}).Where("run_id = ? AND status = ? AND details LIKE ?", runID, BatchDone, `%"too_few_readable":true%`).
		Order("id").Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("read the units of run %d scored from too few readable answers: %w", runID, err)
	}
	return ids, nil
}

// TooFewReadable reports whether the unit's score was left missing because
// too few of its sampled answers could be read, with the counts its
// details keep: readable of asked could be read, need were asked for.
func (b RunBatch) TooFewReadable() (readable, asked, need int, ok bool) {
	if v, _ := b.Details["too_few_readable"].(bool); !v {
		return 0, 0, 0, false
	}
	num := func(key string) int {
		switch v := b.Details[key].(type) {
		case float64: // as read back from JSON
			return int(v)
		case int:
			return v
		}
		return 0
	}
	return num("readable"), num("asked"), num("min_readable"), true
}
