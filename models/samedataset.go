package models

import (
	"context"
	"errors"
	"maps"
	"slices"
)

// errDiffers ends a comparison of a stored dataset's rows at the first
// row that differs.
var errDiffers = errors.New("the rows differ")

// FindSameDataset looks in d's project for a dataset holding exactly what
// d and rows would: the same file name, format, columns, fields, rating
// columns, id and group columns, and row for row the same ids, texts and
// ratings. The command line judges it again instead of importing the file
// a second time, so two runs of one file judge one dataset and compare as
// runs on the same samples. Derived copies, archived and trashed datasets
// are not candidates; the newest match is returned.
func (db *DB) FindSameDataset(ctx context.Context, d Dataset, rows []DatasetRow) (Dataset, bool, error) {
	ds, err := db.ListDatasets(ctx, d.WorkspaceID, d.ProjectID)
	if err != nil {
		return Dataset{}, false, err
	}
	for _, c := range ds {
		if c.ParentDatasetID != nil || c.RowCount != len(rows) || c.SourceFilename != d.SourceFilename || c.Format != d.Format ||
			c.IDColumn != d.IDColumn || c.GroupColumn != d.GroupColumn || !slices.Equal(c.Columns, d.Columns) ||
			!slices.Equal(c.Fields, d.Fields) || !slices.Equal(c.RatingColumns, d.RatingColumns) {
			continue
		}
		i := 0
		err := db.EachDatasetRowChunk(ctx, c.ID, 1000, "", func(stored []DatasetRow) error {
			for _, s := range stored {
				if i >= len(rows) || !sameRow(s, rows[i]) {
					return errDiffers
				}
				i++
			}
			return nil
		})
		switch {
		case errors.Is(err, errDiffers):
			continue
		case err != nil:
			return Dataset{}, false, err
		case i == len(rows):
			return c, true, nil
		}
	}
	return Dataset{}, false, nil
}

// sameRow compares what a row holds, not where it is stored.
func sameRow(a, b DatasetRow) bool {
	return a.Position == b.Position && a.ExternalID == b.ExternalID && maps.Equal(a.Data, b.Data) &&
		maps.EqualFunc(a.Ratings, b.Ratings, func(x, y *float64) bool {
			return (x == nil) == (y == nil) && (x == nil || *x == *y)
		})
}
