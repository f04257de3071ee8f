package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// RowTextsChunk is how many rows EachDatasetRowTexts reads a query when
// its caller does not say.
const RowTextsChunk = 5000

// RowTexts is one dataset row as a run's judge reads it: its ids and the
// texts of the columns asked for, nothing else.
type RowTexts struct {
	ID         int64
	ExternalID string
	// Texts[i] is the row's value of the i-th column asked for, exactly as
	// DatasetRow.Data gives it: "" when the row has no such column.
	Texts []string
}

// CountDatasetRows is the number of rows of the dataset.
func (db *DB) CountDatasetRows(ctx context.Context, datasetID int64) (int, error) {
	var n int64
	if err := db.Reader(ctx).Model(&DatasetRow{}).Where("dataset_id = ?", datasetID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count rows of dataset %d: %w", datasetID, err)
	}
	return int(n), nil
}

// EachDatasetRowTexts hands fn every row of the dataset in file order
// with the texts of the given columns only, reading chunk rows a query
// (RowTextsChunk when chunk is not positive). A row's ratings are not
// read, and of its texts only the asked columns are kept: the rest of a
// row's data is decoded one row at a time and dropped, so a reader holds
// at most a chunk of rows, never the dataset (a run's start read every
// row with all its columns and ratings at once). The values are those of
// ListDatasetRows's Data, byte for byte: the same decoding of the same
// stored JSON. fn is called between queries, with no cursor open, and
// may keep the RowTexts it is given; an error from fn stops the reading
// and is returned as is.
func (db *DB) EachDatasetRowTexts(ctx context.Context, datasetID int64, columns []string, chunk int, fn func(RowTexts) error) error {
	if chunk <= 0 {
		chunk = RowTextsChunk
	}
	// The keyset (position, id) goes on where the previous chunk ended:
	// file order, as ListDatasetRows reads it, with rows of a same
	// position (none are stored so) in the order of their ids.
	var lastPos int
	var lastID int64
	started := false
	var all map[string]string
	batch := make([]RowTexts, 0, chunk)
	for {
		q := db.Reader(ctx).Model(&DatasetRow{}).Select("id, position, external_id, data").Where("dataset_id = ?", datasetID)
		if started {
			q = q.Where("position >= ? AND (position > ? OR id > ?)", lastPos, lastPos, lastID)
		}
		rows, err := q.Order("position, id").Limit(chunk).Rows()
		if err != nil {
			return fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
		}
		batch = batch[:0]
		err = func() error {
			defer rows.Close()
			var data sql.RawBytes
			for rows.Next() {
				var r RowTexts
				if err := rows.Scan(&r.ID, &lastPos, &r.ExternalID, &data); err != nil {
					return fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
				}
				lastID, started = r.ID, true
				// As the JSON serializer of DatasetRow.Data decodes it: an
				// empty value leaves no map, "null" a nil one.
				if all == nil {
					all = map[string]string{}
				}
				clear(all)
				if len(data) > 0 {
					if err := json.Unmarshal(data, &all); err != nil {
						return fmt.Errorf("read data of row %d (id %q) of dataset %d: %w", r.ID, r.ExternalID, datasetID, err)
					}
				}
				r.Texts = make([]string, len(columns))
				for i, c := range columns {
					r.Texts[i] = all[c]
				}
				batch = append(batch, r)
			}
			return rows.Err()
		}()
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(batch) < chunk {
			return nil
		}
	}
}
