package models

import (
	"context"
	"encoding/json"
	"fmt"

	"gorm.io/gorm"
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

// ImportDataset stores a dataset and the rows fill gives to put, in one
// transaction: either everything is imported or nothing is. Rows are
// written in chunks as they come, so a caller that reads its rows from a
// stream holds one chunk at a time, not the dataset. fill may change d's
// Columns until it returns (a streamed JSON file reveals its columns as it
// goes); RowCount is counted here. An error from fill, or no rows at all,
// stores nothing.
func (db *DB) ImportDataset(ctx context.Context, d *Dataset, fill func(put func(DatasetRow) error) error) error {
	if err := checkDataset(d); err != nil {
		return err
	}
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		d.RowCount = 0
		if d.Columns == nil {
			d.Columns = []string{} // a NOT NULL JSON column: [] until fill says
		}
		if err := tx.Create(d).Error; err != nil {
			return fmt.Errorf("create dataset: %w", err)
		}
		cols, err := insertedColumns(tx, &DatasetRow{})
		if err != nil {
			return err
		}
		size := chunkRows(tx, cols)
		chunk := make([]DatasetRow, 0, size)
		flush := func() error {
			if len(chunk) == 0 {
				return nil
			}
			if err := tx.Create(&chunk).Error; err != nil {
				return fmt.Errorf("store dataset rows %d to %d: %w", d.RowCount-len(chunk)+1, d.RowCount, err)
			}
			chunk = chunk[:0]
			return nil
		}
		put := func(r DatasetRow) error {
			r.ID = 0
			r.DatasetID = d.ID
			// NOT NULL JSON columns: no ratings is {}, not null.
			if r.Ratings == nil {
				r.Ratings = map[string]*float64{}
			}
			if r.Data == nil {
				r.Data = map[string]string{}
			}
			chunk = append(chunk, r)
			d.RowCount++
			if len(chunk) == size {
				return flush()
			}
			return nil
		}
		if err := fill(put); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		if d.RowCount == 0 {
			return Errorf(EInvalid, "the dataset has no rows")
		}
		if d.Columns == nil {
			d.Columns = []string{}
		}
		return tx.Model(d).Select("row_count", "columns").Updates(d).Error
	})
}
