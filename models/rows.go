package models

import (
	"context"
	"encoding/json"
	"fmt"
)

// EachDatasetRatings calls fn with the human ratings of every row of the
// dataset, in file order. It reads the ratings column only, row by row
// from one cursor, so a page that summarises the ratings does not hold the
// texts of a large dataset in memory.
func (db *DB) EachDatasetRatings(ctx context.Context, datasetID int64, fn func(ratings map[string]*float64) error) error {
	rows, err := db.Gorm.WithContext(ctx).Model(&DatasetRow{}).Select("ratings").
		Where("dataset_id = ?", datasetID).Order("position").Rows()
	if err != nil {
		return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&raw); err != nil {
			return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
		}
		var r map[string]*float64
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("read ratings of dataset %d: %w", datasetID, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
