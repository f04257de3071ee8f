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

// ListRunSampleRowIDs returns the rows of a run's stored sample results on
// one criterion, in ascending row id, given their count (the run's
// summary's, stored with them in one transaction). It reads the results'
// primary key alone (run_id, criterion_index, row_id), never a stored
// result: first its smallest and largest row on the criterion (a seek to
// each end of the key's range); when those span exactly count ids, as the
// rows of a dataset imported at once do, the ids are every integer between
// them and nothing else is read; otherwise every id is read from the key.
// It is what an alignment's split is drawn from (align.Split reads the set
// of ids alone).
func (db *DB) ListRunSampleRowIDs(ctx context.Context, runID int64, criterion, count int) ([]int64, error) {
	fail := func(err error) ([]int64, error) {
		return nil, fmt.Errorf("read the stored rows of run %d, criterion %d: %w", runID, criterion, err)
	}
	// Two statements: SQLite reads MIN or MAX alone from one end of the
	// index, both in one statement from every entry.
	var lo, hi sql.NullInt64
	if err := db.Reader(ctx).Raw("SELECT MIN(row_id) FROM run_sample_results WHERE run_id = ? AND criterion_index = ?", runID, criterion).Row().Scan(&lo); err != nil {
		return fail(err)
	}
	if err := db.Reader(ctx).Raw("SELECT MAX(row_id) FROM run_sample_results WHERE run_id = ? AND criterion_index = ?", runID, criterion).Row().Scan(&hi); err != nil {
		return fail(err)
	}
	if !lo.Valid || !hi.Valid {
		return []int64{}, nil
	}
	if hi.Int64-lo.Int64+1 == int64(count) {
		// The key is unique: count distinct ids between lo and hi are all of them.
		ids := make([]int64, count)
		for i := range ids {
			ids[i] = lo.Int64 + int64(i)
		}
		return ids, nil
	}
	rows, err := db.Reader(ctx).Raw("SELECT row_id FROM run_sample_results WHERE run_id = ? AND criterion_index = ? ORDER BY row_id",
		runID, criterion).Rows()
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	ids := make([]int64, 0, count)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fail(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return ids, nil
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

// ListRowIDsByPosition returns the rows of a run's stored results on one
// criterion whose places in dataset order (rank_position) are from to
// from+limit-1, in that order: one range of the order's index, no other
// column read.
func (db *DB) ListRowIDsByPosition(ctx context.Context, runID int64, criterion, from, limit int) ([]int64, error) {
	var ids []int64
	err := db.Reader(ctx).Model(&RunSampleResult{}).Where("run_id = ? AND criterion_index = ? AND rank_position BETWEEN ? AND ?",
		runID, criterion, from, from+limit-1).Order("rank_position").Pluck("row_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("read the rows of run %d, criterion %d in dataset order: %w", runID, criterion, err)
	}
	return ids, nil
}

// ListExternalIDs returns the ids in the file of the given dataset rows,
// keyed by row id (a row stored without one maps to "").
func (db *DB) ListExternalIDs(ctx context.Context, rowIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(rowIDs))
	const chunk = 500 // ids per IN list, far under either dialect's parameter limit
	for start := 0; start < len(rowIDs); start += chunk {
		var part []struct {
			ID         int64
			ExternalID *string
		}
		if err := db.Reader(ctx).Table("dataset_rows").Select("id, external_id").
			Where("id IN ?", rowIDs[start:min(start+chunk, len(rowIDs))]).Scan(&part).Error; err != nil {
			return nil, fmt.Errorf("read the ids of dataset rows: %w", err)
		}
		for _, p := range part {
			if p.ExternalID != nil {
				out[p.ID] = *p.ExternalID
			} else {
				out[p.ID] = ""
			}
		}
	}
	return out, nil
}
