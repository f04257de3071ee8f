package models

import (
	"context"
	"database/sql"
	"fmt"
)

// batchLayoutColumns are what reports need of a batch: where it sits and
// which samples it held, not its prompts, answers or problems (which are
// most of a batch's bytes and are shown only on the batch's own page).
var batchLayoutColumns = []string{"id", "run_id", "criterion_index", "round", "batch_index", "row_ids", "status"}

// scoreValueColumns are a score without the judge's analysis text.
var scoreValueColumns = []string{"id", "run_id", "batch_id", "criterion_index", "round", "row_id", "label", "score"}

// ListBatchLayout returns every batch of a run in order with only its
// layout (ids, criterion, round, index, samples, status): the prompts and
// answers are left in the database.
func (db *DB) ListBatchLayout(ctx context.Context, runID int64) ([]RunBatch, error) {
	n, err := db.countOfRun(ctx, &RunBatch{}, runID)
	if err != nil {
		return nil, err
	}
	bs := make([]RunBatch, 0, n)
	err = db.Reader(ctx).Select(batchLayoutColumns).Where("run_id = ?", runID).
		Order("criterion_index, round, batch_index").Find(&bs).Error
	return bs, err
}

// ListScoreValues returns every score of a run, as ListScores does, but
// without the judge's analysis text.
func (db *DB) ListScoreValues(ctx context.Context, runID int64) ([]RunScore, error) {
	n, err := db.countOfRun(ctx, &RunScore{}, runID)
	if err != nil {
		return nil, err
	}
	ss := make([]RunScore, 0, n)
	// Scanned by hand: through GORM's reflection the read took half of a
	// running run's page (BenchmarkLivePages' profile, 40,000 scores).
	rows, err := db.Reader(ctx).Model(&RunScore{}).Select(scoreValueColumns).Where("run_id = ?", runID).
		Order("criterion_index, round, row_id").Rows()
	if err != nil {
		return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
	}
	defer rows.Close()
	var score sql.NullFloat64
	for rows.Next() {
		var s RunScore
		if err := rows.Scan(&s.ID, &s.RunID, &s.BatchID, &s.CriterionIndex, &s.Round, &s.RowID, &s.Label, &score); err != nil {
			return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
		}
		if score.Valid {
			v := score.Float64
			s.Score = &v
		}
		ss = append(ss, s)
	}
	return ss, rows.Err()
}

// countOfRun counts a run's rows of model's table, so that a list of them
// is allocated once at its size: grown by appending, a million-sample
// run's two million scores took up to twice their size while read, and
// kept the unused half of the last array for as long as they were held
// (its figures' computation). Rows added between the count and the read
// (a run still going) are appended as before.
func (db *DB) countOfRun(ctx context.Context, model any, runID int64) (int, error) {
	var n int64
	if err := db.Reader(ctx).Model(model).Where("run_id = ?", runID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count the rows of run %d: %w", runID, err)
	}
	return int(n), nil
}

// ScoreFigure is what a run's figures read of one score: no ids of its
// own or its run's, no analysis, and the score as a value beside whether
// it was readable rather than behind a pointer. 40 bytes, against 80 for
// a RunScore and 8 more for each readable score's own allocation: at a
// million samples of two rounds, the two million scores a running run's
// figures read took 184 MB as RunScores.
type ScoreFigure struct {
	RowID, BatchID        int64
	Score                 float64 // meaningful when Readable
	CriterionIndex, Round int32
	Label                 int32
	Readable              bool
}

// scoreFigureColumns are a score's columns that ScoreFigure holds.
var scoreFigureColumns = []string{"batch_id", "criterion_index", "round", "row_id", "label", "score"}

// ListScoreFigures returns every score of a run as ListScoreValues does
// (same order: criterion, round, row), but only what its figures read
// (ScoreFigure), in an array allocated at its size.
func (db *DB) ListScoreFigures(ctx context.Context, runID int64) ([]ScoreFigure, error) {
	n, err := db.countOfRun(ctx, &RunScore{}, runID)
	if err != nil {
		return nil, err
	}
	ss := make([]ScoreFigure, 0, n)
	rows, err := db.Reader(ctx).Model(&RunScore{}).Select(scoreFigureColumns).Where("run_id = ?", runID).
		Order("criterion_index, round, row_id").Rows()
	if err != nil {
		return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
	}
	defer rows.Close()
	var score sql.NullFloat64
	var ci, round, label int64
	for rows.Next() {
		var s ScoreFigure
		if err := rows.Scan(&s.BatchID, &ci, &round, &s.RowID, &label, &score); err != nil {
			return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
		}
		s.CriterionIndex, s.Round, s.Label = int32(ci), int32(round), int32(label)
		s.Score, s.Readable = score.Float64, score.Valid
		ss = append(ss, s)
	}
	return ss, rows.Err()
}

// FigureOf is what ListScoreFigures reads of s.
func FigureOf(s RunScore) ScoreFigure {
	f := ScoreFigure{RowID: s.RowID, BatchID: s.BatchID, CriterionIndex: int32(s.CriterionIndex), Round: int32(s.Round), Label: int32(s.Label)}
	if s.Score != nil {
		f.Score, f.Readable = *s.Score, true
	}
	return f
}
