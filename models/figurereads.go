package models

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
)

// ScoreValue is what a run's figures keep of one score once its criterion
// and round are known (ScoreSpan) and its batch is needed only when it is
// unreadable (RunScoreValues.UnreadableBatch): 24 bytes, against 40 for a
// ScoreFigure. At a million samples of two rounds a running run's
// figures hold two million of them while they are computed.
type ScoreValue struct {
	RowID    int64
	Score    float64 // meaningful when Readable
	Label    int32
	Readable bool
}

// ScoreSpan is the scores [Start, End) of RunScoreValues.Scores that are
// of one criterion and round. Read from the database they are ordered by
// criterion and round, so each pair has one span; converted from a list
// in another order (ScoreValuesOf), a pair may have several, in the
// list's order.
type ScoreSpan struct {
	Criterion, Round int32
	Start, End       int
}

// RunScoreValues are a run's scores as its figures read them: values in
// the order criterion, round, row, the spans of
// each criterion and round, and the batch of each unreadable score by its
// place in Scores (a score's batch tells only whether its call failed or
// its unit read too few answers, which matters only when it has no
// score).
type RunScoreValues struct {
	Scores          []ScoreValue
	Spans           []ScoreSpan
	UnreadableBatch map[int]int64
}

// add appends one score, opening a span when its criterion or round
// differs from the last one's.
func (v *RunScoreValues) add(batchID int64, criterion, round int32, s ScoreValue) {
	i := len(v.Scores)
	if n := len(v.Spans); n == 0 || v.Spans[n-1].Criterion != criterion || v.Spans[n-1].Round != round {
		v.Spans = append(v.Spans, ScoreSpan{Criterion: criterion, Round: round, Start: i, End: i})
	}
	v.Scores = append(v.Scores, s)
	v.Spans[len(v.Spans)-1].End = i + 1
	if !s.Readable {
		if v.UnreadableBatch == nil {
			v.UnreadableBatch = map[int]int64{}
		}
		v.UnreadableBatch[i] = batchID
	}
}

// ScoreValuesOf is what ListCriterionScoreValues reads of scores, in
// their order (of any criteria: the spans say which).
func ScoreValuesOf(scores []RunScore) RunScoreValues {
	v := RunScoreValues{Scores: make([]ScoreValue, 0, len(scores))}
	for _, s := range scores {
		sv := ScoreValue{RowID: s.RowID, Label: int32(s.Label)}
		if s.Score != nil {
			sv.Score, sv.Readable = *s.Score, true
		}
		v.add(s.BatchID, int32(s.CriterionIndex), int32(s.Round), sv)
	}
	return v
}

// ListCriterionScoreValues returns the scores of one criterion of a run
// in order of round and row, as
// RunScoreValues: the round once per span, the batch only of unreadable
// scores, the values in an array allocated at its size. A run's figures
// read one criterion at a time, so that only its scores are held while
// it is computed.
func (db *DB) ListCriterionScoreValues(ctx context.Context, runID int64, criterion int) (RunScoreValues, error) {
	var n int64
	if err := db.Reader(ctx).Model(&RunScore{}).Where("run_id = ? AND criterion_index = ?", runID, criterion).Count(&n).Error; err != nil {
		return RunScoreValues{}, fmt.Errorf("count the scores of criterion %d of run %d: %w", criterion, runID, err)
	}
	v := RunScoreValues{Scores: make([]ScoreValue, 0, n)}
	rows, err := db.Reader(ctx).Model(&RunScore{}).Select(scoreFigureColumns).Where("run_id = ? AND criterion_index = ?", runID, criterion).
		Order("round, row_id").Rows()
	if err != nil {
		return RunScoreValues{}, fmt.Errorf("read the scores of run %d: %w", runID, err)
	}
	defer rows.Close()
	var score sql.NullFloat64
	var batchID, rowID, ci, round, label int64
	for rows.Next() {
		if err := rows.Scan(&batchID, &ci, &round, &rowID, &label, &score); err != nil {
			return RunScoreValues{}, fmt.Errorf("read the scores of run %d: %w", runID, err)
		}
		v.add(batchID, int32(ci), int32(round), ScoreValue{RowID: rowID, Score: score.Float64, Label: int32(label), Readable: score.Valid})
	}
	if err := rows.Err(); err != nil {
		return RunScoreValues{}, fmt.Errorf("read the scores of run %d: %w", runID, err)
	}
	return v, nil
}

// BatchFigure is what a run's figures read of a batch: its id, status,
// criterion, round and rows, 64 bytes. The rows of all the batches of
// one read are slices of one array (ListBatchFigures), not an
// allocation a batch.
type BatchFigure struct {
	ID                    int64
	RowIDs                []int64
	Status                string
	CriterionIndex, Round int32
}

// BatchFiguresOf is what ListBatchFigures reads of batches; the row ids
// are shared with them.
func BatchFiguresOf(batches []RunBatch) []BatchFigure {
	out := make([]BatchFigure, len(batches))
	for i, b := range batches {
		out[i] = BatchFigure{ID: b.ID, RowIDs: b.RowIDs, Status: b.Status, CriterionIndex: int32(b.CriterionIndex), Round: int32(b.Round)}
	}
	return out
}

// ListCriterionBatchFigures returns the batches of one criterion of a
// run in order of round and index, as BatchFigure: scanned by
// hand rather than through GORM (whose RunBatch and JSON decoding took
// about a kilobyte a batch), the statuses as the package's constants,
// the row ids parsed from their stored list into one array. rowsHint is
// how many row ids to make room for at first (a run's scores are one a
// batch row once answered); a wrong hint costs only growth.
func (db *DB) ListCriterionBatchFigures(ctx context.Context, runID int64, criterion, rowsHint int) ([]BatchFigure, error) {
	var n int64
	if err := db.Reader(ctx).Model(&RunBatch{}).Where("run_id = ? AND criterion_index = ?", runID, criterion).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("count the batches of criterion %d of run %d: %w", criterion, runID, err)
	}
	bs := make([]BatchFigure, 0, n)
	ends := make([]int, 0, n)
	ids := make([]int64, 0, max(rowsHint, 0))
	rows, err := db.Reader(ctx).Model(&RunBatch{}).Select([]string{"id", "criterion_index", "round", "row_ids", "status"}).
		Where("run_id = ? AND criterion_index = ?", runID, criterion).Order("round, batch_index").Rows()
	if err != nil {
		return nil, fmt.Errorf("read the batches of run %d: %w", runID, err)
	}
	defer rows.Close()
	var id, ci, round int64
	var rowIDs, status sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &ci, &round, &rowIDs, &status); err != nil {
			return nil, fmt.Errorf("read the batches of run %d: %w", runID, err)
		}
		if ids, err = appendInt64List(ids, rowIDs); err != nil {
			return nil, fmt.Errorf("read the rows of batch %d of run %d: %w", id, runID, err)
		}
		bs = append(bs, BatchFigure{ID: id, Status: batchStatusOf(status), CriterionIndex: int32(ci), Round: int32(round)})
		ends = append(ends, len(ids))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the batches of run %d: %w", runID, err)
	}
	// Sliced once the array has stopped growing: slices taken while it
	// grew would keep its earlier copies alive.
	start := 0
	for i, end := range ends {
		bs[i].RowIDs = ids[start:end:end]
		start = end
	}
	return bs, nil
}

// batchStatusOf is a stored status as the package's constant, so that
// reading it allocates nothing; another status is copied as it is.
func batchStatusOf(raw []byte) string {
	switch string(raw) {
	case BatchDone:
		return BatchDone
	case BatchFailed:
		return BatchFailed
	case BatchPending:
		return BatchPending
	}
	return string(raw)
}

// appendInt64List appends the integers of a stored JSON list of row ids
// ("[1,2,3]", spaces allowed, "null" for none) to dst, without
// allocating per value. Anything else is decoded as JSON, which says
// what is wrong with it.
func appendInt64List(dst []int64, raw []byte) ([]int64, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return dst, nil
	}
	n := len(dst)
	if len(b) >= 2 && b[0] == '[' && b[len(b)-1] == ']' {
		if dst, ok := appendPlainInts(dst, b[1:len(b)-1]); ok {
			return dst, nil
		}
	}
	dst = dst[:n]
	var vs []int64
	if err := json.Unmarshal(b, &vs); err != nil {
		return dst, fmt.Errorf("row ids %.40q are not a list of integers: %w", b, err)
	}
	return append(dst, vs...), nil
}

// appendPlainInts appends the comma-separated decimal integers of b
// (spaces around them allowed) to dst; false, with dst's appended part
// undefined, when b holds anything else or a value overflows.
func appendPlainInts(dst []int64, b []byte) ([]int64, bool) {
	i := 0
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	skip()
	if i == len(b) {
		return dst, true // []
	}
	for {
		skip()
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		start := i
		var v uint64
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if v > (math.MaxInt64-9)/10 {
				return dst, false // too large for this parser: JSON says
			}
			v = v*10 + uint64(b[i]-'0')
			i++
		}
		if i == start {
			return dst, false
		}
		x := int64(v)
		if neg {
			x = -x
		}
		dst = append(dst, x)
		skip()
		if i == len(b) {
			return dst, true
		}
		if b[i] != ',' {
			return dst, false
		}
		i++
	}
}
