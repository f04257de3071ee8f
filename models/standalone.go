package models

import (
	"context"
	"database/sql"
	"fmt"
)

// Reads of the standalone report of a run, which is written a chunk of
// dataset rows at a time: each read takes the chunk's row ids and reads
// those rows' results alone, through the tables' primary keys, so a chunk
// costs what its rows do whatever the size of the run.

// SampleFinal is a stored sample result's final score and human rating.
type SampleFinal struct {
	Final *float64
	Human *float64
}

// ListSampleFinalsOf returns the stored final scores and human ratings of
// the given rows on one criterion of a finished run, keyed by row id (a
// row without a stored result is absent).
func (db *DB) ListSampleFinalsOf(ctx context.Context, runID int64, criterion int, rowIDs []int64) (map[int64]SampleFinal, error) {
	out := make(map[int64]SampleFinal, len(rowIDs))
	if len(rowIDs) == 0 {
		return out, nil
	}
	rows, err := db.Reader(ctx).Raw("SELECT row_id, final, human FROM run_sample_results WHERE run_id = ? AND criterion_index = ? AND row_id IN ?",
		runID, criterion, rowIDs).Rows()
	if err != nil {
		return nil, fmt.Errorf("read the stored results of %d rows of run %d, criterion %d: %w", len(rowIDs), runID, criterion, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var final, human sql.NullFloat64
		if err := rows.Scan(&id, &final, &human); err != nil {
			return nil, fmt.Errorf("read the stored results of run %d, criterion %d: %w", runID, criterion, err)
		}
		out[id] = SampleFinal{Final: nullFloat(final), Human: nullFloat(human)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the stored results of run %d, criterion %d: %w", runID, criterion, err)
	}
	return out, nil
}

func nullFloat(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	f := v.Float64
	return &f
}

// ListScoresOfRows returns every stored score of the given rows on the
// run's criteria 0 to criteria-1, with the judge's analysis and label (the
// batch and prompt are not read), ordered as ListScores orders them:
// criterion, round, row. Each criterion's rounds are named in the query
// (0 to the highest stored, found through the index), so that the lookup
// goes through run_scores' unique index (run, criterion, round, row)
// instead of every score of the run.
func (db *DB) ListScoresOfRows(ctx context.Context, runID int64, criteria int, rowIDs []int64) ([]RunScore, error) {
	if len(rowIDs) == 0 || criteria <= 0 {
		return nil, nil
	}
	var out []RunScore
	for ci := range criteria {
		rounds, err := db.criterionRounds(ctx, runID, ci)
		if err != nil {
			return nil, err
		}
		if len(rounds) == 0 {
			continue
		}
		var part []RunScore
		if err := db.Reader(ctx).Select("id, run_id, criterion_index, round, row_id, label, score, analysis").
			Where("run_id = ? AND criterion_index = ? AND round IN ? AND row_id IN ?", runID, ci, rounds, rowIDs).
			Order("criterion_index, round, row_id").Find(&part).Error; err != nil {
			return nil, fmt.Errorf("read the scores of %d rows of run %d, criterion %d: %w", len(rowIDs), runID, ci, err)
		}
		out = append(out, part...)
	}
	return out, nil
}
