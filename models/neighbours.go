package models

import (
	"context"
	"errors"

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

// ListBatchScores returns every score stored from one batch of a run.
func (db *DB) ListBatchScores(ctx context.Context, runID, batchID int64) ([]RunScore, error) {
	var ss []RunScore
	err := db.Reader(ctx).Where("run_id = ? AND batch_id = ?", runID, batchID).Order("criterion_index, label").Find(&ss).Error
	return ss, err
}
