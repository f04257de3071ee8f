package models

import (
	"context"
	"database/sql"
	"fmt"
)

// ListRoundScoresOfRows returns the given rows' round scores on one of
// the run's criteria, by row: each row's scores in round order, nil where
// a round's score could not be read; a row without stored scores is
// absent. Only the score is read (no analysis), through run_scores'
// unique index (run, criterion, round, row) as ListScoresOfRows does.
// It is what a page showing a few rows of a finished run reads to write
// their finals as the export does (report.FinalNumber).
func (db *DB) ListRoundScoresOfRows(ctx context.Context, runID int64, criterion int, rowIDs []int64) (map[int64][]*float64, error) {
	out := map[int64][]*float64{}
	if len(rowIDs) == 0 {
		return out, nil
	}
	rounds, err := db.criterionRounds(ctx, runID, criterion)
	if err != nil || len(rounds) == 0 {
		return out, err
	}
	var part []RunScore
	if err := db.Reader(ctx).Select("round, row_id, score").
		Where("run_id = ? AND criterion_index = ? AND round IN ? AND row_id IN ?", runID, criterion, rounds, rowIDs).
		Order("row_id, round").Find(&part).Error; err != nil {
		return nil, fmt.Errorf("read the round scores of %d rows of run %d, criterion %d: %w", len(rowIDs), runID, criterion, err)
	}
	for _, s := range part {
		out[s.RowID] = append(out[s.RowID], s.Score)
	}
	return out, nil
}

// criterionRounds names the rounds stored for one criterion of a run, 0 to
// the highest (found through run_scores' index; none when it has no
// score), so that a lookup of a few rows' scores seeks each (round, row)
// in the unique index (run, criterion, round, row) instead of walking
// every score of the criterion.
func (db *DB) criterionRounds(ctx context.Context, runID int64, criterion int) ([]int64, error) {
	var top sql.NullInt64
	if err := db.Reader(ctx).Raw("SELECT MAX(round) FROM run_scores WHERE run_id = ? AND criterion_index = ?", runID, criterion).
		Row().Scan(&top); err != nil {
		return nil, fmt.Errorf("read the rounds of run %d, criterion %d: %w", runID, criterion, err)
	}
	if !top.Valid || top.Int64 < 0 {
		return nil, nil
	}
	rounds := make([]int64, top.Int64+1)
	for r := range rounds {
		rounds[r] = int64(r)
	}
	return rounds, nil
}
