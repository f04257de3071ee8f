package models

import (
	"context"
	"database/sql"
	"fmt"
)

// scoreValueColumns are a score without the judge's analysis text.
var scoreValueColumns = []string{"id", "run_id", "batch_id", "criterion_index", "round", "row_id", "label", "score"}

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

// scoreFigureColumns are a score's columns that a run's figures read
// (ListCriterionScoreValues): no ids of its own or its run's, no analysis.
var scoreFigureColumns = []string{"batch_id", "criterion_index", "round", "row_id", "label", "score"}
