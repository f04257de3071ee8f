package models

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"gorm.io/gorm"
)

// RowRef names a dataset row without its text.
type RowRef struct {
	ID         int64
	ExternalID string
}

// NeighbourRows returns the rows just before and after position in a
// dataset's order, nil at either end: the sample page's previous and next
// links.
func (db *DB) NeighbourRows(ctx context.Context, datasetID int64, position int) (prev, next *RowRef, err error) {
	find := func(cond, order string) (*RowRef, error) {
		var r RowRef
		err := db.Reader(ctx).Model(&DatasetRow{}).Select("id, external_id").
			Where("dataset_id = ? AND position "+cond+" ?", datasetID, position).Order(order).Take(&r).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &r, nil
	}
	if prev, err = find("<", "position DESC"); err != nil {
		return nil, nil, err
	}
	if next, err = find(">", "position ASC"); err != nil {
		return nil, nil, err
	}
	return prev, next, nil
}

// ListBatchScores returns every score stored from one batch of a run, by
// criterion and label.
//
// The scores are read by batch_id alone (a batch's id is unique across
// runs), through run_scores_batch, and kept when they are the run's. With
// run_id in the WHERE and the ORDER BY on criterion_index, SQLite's
// planner (it has no statistics) chose run_scores_place for run_id and
// read every score of the run to keep a batch's ten: 0.3-0.4 s a batch at
// 100,000 samples, and a sample page reads one batch a round.
func (db *DB) ListBatchScores(ctx context.Context, runID, batchID int64) ([]RunScore, error) {
	var ss []RunScore
	if err := db.Reader(ctx).Where("batch_id = ?", batchID).Find(&ss).Error; err != nil {
		return nil, err
	}
	ss = slices.DeleteFunc(ss, func(s RunScore) bool { return s.RunID != runID })
	slices.SortFunc(ss, func(a, b RunScore) int {
		return cmp.Or(cmp.Compare(a.CriterionIndex, b.CriterionIndex), cmp.Compare(a.Label, b.Label), cmp.Compare(a.ID, b.ID))
	})
	return ss, nil
}
