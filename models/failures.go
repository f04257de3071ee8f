package models

import (
	"context"
	"fmt"
)

// A score can be missing for two reasons that call for different fixes:
// the judge never answered (the call failed: the endpoint was down, timed
// out, refused the key), or it answered and no score could be read from
// the answer. The run page counts them apart and names the causes of the
// first from the failed batches' stored error kind.

// FailureCause is one reason judge calls of a run failed, with how many
// calls it stopped and the message of the latest of them.
type FailureCause struct {
	// Kind is evaluator/judge.ErrorKind as stored in RunBatch.ErrorKind;
	// empty for failures stored before kinds were recorded.
	Kind    string
	Calls   int
	Example string
}

// NoAnswerScores counts a run's scores missing because their call failed
// (no answer came), per criterion index; the rest of Run.MissingScores are
// unreadable answers.
func (db *DB) NoAnswerScores(ctx context.Context, runID int64) (map[int]int, error) {
	var rows []struct {
		CriterionIndex int
		N              int
	}
	err := db.Reader(ctx).Model(&RunScore{}).
		Select("run_scores.criterion_index AS criterion_index, COUNT(*) AS n").
		Joins("JOIN run_batches ON run_batches.id = run_scores.batch_id").
		Where("run_scores.run_id = ? AND run_batches.status = ? AND run_scores.score IS NULL", runID, BatchFailed).
		Group("run_scores.criterion_index").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("count unanswered scores of run %d: %w", runID, err)
	}
	out := make(map[int]int, len(rows))
	for _, r := range rows {
		out[r.CriterionIndex] = r.N
	}
	return out, nil
}

// FailureCauses lists why a run's failed calls got no answer, the most
// frequent cause first.
func (db *DB) FailureCauses(ctx context.Context, runID int64) ([]FailureCause, error) {
	var rows []struct {
		ErrorKind string
		N         int
		LastID    int64
	}
	err := db.Reader(ctx).Model(&RunBatch{}).
		Select("error_kind, COUNT(*) AS n, MAX(id) AS last_id").
		Where("run_id = ? AND "+failedBatch, runID).
		Group("error_kind").Order("n DESC, error_kind").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list failure causes of run %d: %w", runID, err)
	}
	out := make([]FailureCause, 0, len(rows))
	for _, r := range rows {
		var example string
		if err := db.Reader(ctx).Model(&RunBatch{}).Where("id = ?", r.LastID).Pluck("error", &example).Error; err != nil {
			return nil, err
		}
		out = append(out, FailureCause{Kind: r.ErrorKind, Calls: r.N, Example: example})
	}
	return out, nil
}

// failedBatch selects a run's failed calls as the partial index
// run_batches_failed (00039) holds them: the status as a literal, which a
// planner matches to the index's condition (a bound parameter it cannot).
const failedBatch = "status = '" + BatchFailed + "'"

// BatchFilter selects a run's batches for the batch list.
type BatchFilter struct {
	// Failed keeps only the calls that got no answer; Kind narrows them to
	// one cause (RunBatch.ErrorKind).
	Failed bool
	Kind   string
	// Offset and Limit page the list (Limit 0: no limit).
	Offset, Limit int
}

// ListBatchSummaries returns a run's batches as the filter asks, in run
// order, without their request and answer texts (the list shows only
// where each call sits and how it ended), and how many match in all.
func (db *DB) ListBatchSummaries(ctx context.Context, runID int64, f BatchFilter) ([]RunBatch, int, error) {
	q := db.Reader(ctx).Model(&RunBatch{}).Where("run_id = ?", runID)
	if f.Failed {
		q = q.Where(failedBatch)
		if f.Kind != "" {
			q = q.Where("error_kind = ?", f.Kind)
		}
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var bs []RunBatch
	q = q.Select("id, run_id, criterion_index, round, batch_index, row_ids, status, attempts, calls, latency_ms, error, error_kind, done_at").
		Order("criterion_index, round, batch_index").Offset(f.Offset)
	if f.Limit > 0 {
		q = q.Limit(f.Limit)
	}
	if err := q.Find(&bs).Error; err != nil {
		return nil, 0, err
	}
	return bs, int(total), nil
}

// UnreadableAnswers returns up to limit of a run's answered calls whose
// answer reported a problem (no score, or not every score, could be read
// from it), in run order, with the judge's answer and the problems alone:
// never the request, whose prompt holds the dataset's text. A run without
// a single readable score shows them as examples of what went wrong.
func (db *DB) UnreadableAnswers(ctx context.Context, runID int64, limit int) ([]RunBatch, error) {
	var bs []RunBatch
	err := db.Reader(ctx).Model(&RunBatch{}).Select("id, run_id, criterion_index, round, batch_index, row_ids, status, problems, response").
		Where("run_id = ? AND status = ? AND problems <> ?", runID, BatchDone, "[]").
		Order("criterion_index, round, batch_index").Limit(limit).Find(&bs).Error
	if err != nil {
		return nil, fmt.Errorf("list unreadable answers of run %d: %w", runID, err)
	}
	return bs, nil
}
