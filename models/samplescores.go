package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// SampleScore is what comparing runs reads of one stored sample result:
// the final score and the human rating, with the sample's row (and, when
// asked, its id in the dataset, which pairs samples across a noisy copy).
type SampleScore struct {
	RowID      int64
	ExternalID string
	Final      *float64
	Human      *float64
}

// ListRunSampleScores returns a finished run's stored sample results on one
// criterion in dataset order (their rank by position, which is the order
// the report that stored them listed them in), reading only the columns
// comparisons need: no round scores, no dataset text. With externalIDs the
// rows' dataset ids are read too (a join on dataset_rows' primary key).
// It reads through the read pool, one query, streaming the rows.
func (db *DB) ListRunSampleScores(ctx context.Context, runID int64, criterion int, externalIDs bool) ([]SampleScore, error) {
	q := "SELECT r.row_id, r.final, r.human, '' FROM run_sample_results r " +
		"WHERE r.run_id = ? AND r.criterion_index = ? ORDER BY r.rank_position"
	if externalIDs {
		q = "SELECT r.row_id, r.final, r.human, COALESCE(d.external_id, '') FROM run_sample_results r " +
			"LEFT JOIN dataset_rows d ON d.id = r.row_id WHERE r.run_id = ? AND r.criterion_index = ? ORDER BY r.rank_position"
	}
	rows, err := db.Reader(ctx).Raw(q, runID, criterion).Rows()
	if err != nil {
		return nil, fmt.Errorf("read the stored scores of run %d, criterion %d: %w", runID, criterion, err)
	}
	defer rows.Close()
	var out []SampleScore
	// The values live in slabs rather than one allocation each: a
	// 100,000-sample criterion is 200,000 of them.
	var slab []float64
	opt := func(v sql.NullFloat64) *float64 {
		if !v.Valid {
			return nil
		}
		if len(slab) == cap(slab) {
			slab = make([]float64, 0, 4096)
		}
		slab = append(slab, v.Float64)
		return &slab[len(slab)-1]
	}
	for rows.Next() {
		var s SampleScore
		var final, human sql.NullFloat64
		if err := rows.Scan(&s.RowID, &final, &human, &s.ExternalID); err != nil {
			return nil, fmt.Errorf("read the stored scores of run %d, criterion %d: %w", runID, criterion, err)
		}
		s.Final, s.Human = opt(final), opt(human)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the stored scores of run %d, criterion %d: %w", runID, criterion, err)
	}
	return out, nil
}

// FindDatasetRowByExternalID returns the row of a dataset with the given
// sample id (unique within a dataset: dataset_rows_external), through the
// index; found is false when the dataset has no such sample.
func (db *DB) FindDatasetRowByExternalID(ctx context.Context, datasetID int64, externalID string) (row DatasetRow, found bool, err error) {
	err = db.Reader(ctx).Where("dataset_id = ? AND external_id = ?", datasetID, externalID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return row, false, nil
	}
	if err != nil {
		return row, false, fmt.Errorf("find sample %q of dataset %d: %w", externalID, datasetID, err)
	}
	return row, true, nil
}
