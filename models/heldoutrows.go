package models

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
)

// DatasetRowsInFileOrder returns those of ids that are rows of dataset
// datasetID, in file order (position, then id), reading their ids and
// positions only, findRowsChunk ids a statement: the order in which a copy
// of a part of the dataset (an alignment's held-out part) stores them,
// known before any row's text is read.
func (db *DB) DatasetRowsInFileOrder(ctx context.Context, datasetID int64, ids []int64) ([]int64, error) {
	type place struct {
		ID        int64
		DatasetID int64
		Position  int
	}
	found := make([]place, 0, len(ids))
	for start := 0; start < len(ids); start += findRowsChunk {
		var part []place
		// By their keys alone, as FindDatasetRows reads them.
		if err := db.Reader(ctx).Model(&DatasetRow{}).Select("id, dataset_id, position").
			Where("id IN ?", ids[start:min(start+findRowsChunk, len(ids))]).Scan(&part).Error; err != nil {
			return nil, fmt.Errorf("read the places of %d rows of dataset %d: %w", len(ids), datasetID, err)
		}
		for _, p := range part {
			if p.DatasetID == datasetID {
				found = append(found, p)
			}
		}
	}
	slices.SortFunc(found, func(x, y place) int { return cmp.Or(cmp.Compare(x.Position, y.Position), cmp.Compare(x.ID, y.ID)) })
	out := make([]int64, len(found))
	for i, p := range found {
		out[i] = p.ID
	}
	// An id asked twice is one row, copied once.
	return slices.Compact(out), nil
}

// EachDatasetRowByID hands fn the rows of dataset datasetID with the given
// ids, in the order of ids (DatasetRowsInFileOrder's), reading
// findRowsChunk of them a statement: a reader holds one chunk of rows,
// never the whole part. Their Data and Ratings are decoded as
// DatasetRow's JSON serializer decodes them (FindDatasetRows's rows, field
// for field). An id of no row of the dataset is skipped; an error from fn
// stops the reading and is returned as is. fn is called between
// statements, with no cursor open.
func (db *DB) EachDatasetRowByID(ctx context.Context, datasetID int64, ids []int64, fn func(DatasetRow) error) error {
	byID := make(map[int64]DatasetRow, min(len(ids), findRowsChunk))
	for start := 0; start < len(ids); start += findRowsChunk {
		chunk := ids[start:min(start+findRowsChunk, len(ids))]
		clear(byID)
		rows, err := db.Reader(ctx).Model(&DatasetRow{}).Select("id, dataset_id, position, external_id, data, ratings").
			Where("id IN ?", chunk).Rows()
		if err != nil {
			return fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
		}
		err = func() error {
			defer rows.Close()
			var data, ratings sql.RawBytes
			for rows.Next() {
				var r DatasetRow
				if err := rows.Scan(&r.ID, &r.DatasetID, &r.Position, &r.ExternalID, &data, &ratings); err != nil {
					return fmt.Errorf("read rows of dataset %d: %w", datasetID, err)
				}
				if r.DatasetID != datasetID {
					continue
				}
				// As the JSON serializer decodes them: an empty value
				// leaves no map.
				if len(data) > 0 {
					if err := json.Unmarshal(data, &r.Data); err != nil {
						return fmt.Errorf("read data of row %d (id %q) of dataset %d: %w", r.ID, r.ExternalID, datasetID, err)
					}
				}
				if len(ratings) > 0 {
					if err := json.Unmarshal(ratings, &r.Ratings); err != nil {
						return fmt.Errorf("read ratings of row %d (id %q) of dataset %d: %w", r.ID, r.ExternalID, datasetID, err)
					}
				}
				byID[r.ID] = r
			}
			return rows.Err()
		}()
		if err != nil {
			return err
		}
		for _, id := range chunk {
			if r, ok := byID[id]; ok {
				if err := fn(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
