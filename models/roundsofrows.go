package models

import (
	"context"
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
	var part []RunScore
	if err := db.Reader(ctx).Select("round, row_id, score").
		Where("run_id = ? AND criterion_index = ? AND row_id IN ?", runID, criterion, rowIDs).
		Order("row_id, round").Find(&part).Error; err != nil {
		return nil, fmt.Errorf("read the round scores of %d rows of run %d, criterion %d: %w", len(rowIDs), runID, criterion, err)
	}
	for _, s := range part {
		out[s.RowID] = append(out[s.RowID], s.Score)
	}
	return out, nil
}
