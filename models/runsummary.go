package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// RunSummary is what a finished run's results page shows apart from its
// table of samples, encoded by the report package, for one variant of the
// page's options, with the key of the inputs it was computed from.
type RunSummary struct {
	RunID      int64  `gorm:"primaryKey;autoIncrement:false"`
	Variant    string `gorm:"primaryKey"`
	InputKey   string
	Summary    string
	ComputedAt time.Time
}

// TableName is run_summaries.
func (RunSummary) TableName() string { return "run_summaries" }

// RunSampleSet says which inputs a run's stored sample results came from,
// and how many samples each criterion has.
type RunSampleSet struct {
	RunID      int64 `gorm:"primaryKey;autoIncrement:false"`
	InputKey   string
	Samples    int
	ComputedAt time.Time
}

// TableName is run_sample_sets.
func (RunSampleSet) TableName() string { return "run_sample_sets" }

// RunSampleResult is one sample's final result on one criterion of a
// finished run, with its rank in each order the results page offers (0 is
// first; samples without a value come last, ties keep dataset order).
type RunSampleResult struct {
	RunID          int64 `gorm:"primaryKey;autoIncrement:false"`
	CriterionIndex int   `gorm:"primaryKey;autoIncrement:false"`
	RowID          int64 `gorm:"primaryKey;autoIncrement:false"`
	Position       int
	Final          *float64
	Human          *float64
	AbsDiff        *float64
	Missing        int
	// Rounds are the round scores, encoded by the report package.
	Rounds          string
	RankPosition    int
	RankScoreAsc    int
	RankScoreDesc   int
	RankHumanAsc    int
	RankHumanDesc   int
	RankDiffAsc     int
	RankDiffDesc    int
	RankMissingAsc  int
	RankMissingDesc int
	// RankSpreadDesc is the place in the review queue's order by the
	// spread between rounds (report.SpreadOrder); nil for results stored
	// before migration 00038.
	RankSpreadDesc *int
}

// TableName is run_sample_results.
func (RunSampleResult) TableName() string { return "run_sample_results" }

// FindRunSummary returns a run's stored summary of one variant; found is
// false when there is none.
func (db *DB) FindRunSummary(ctx context.Context, runID int64, variant string) (s RunSummary, found bool, err error) {
	err = db.Reader(ctx).Where("run_id = ? AND variant = ?", runID, variant).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s, false, nil
	}
	return s, err == nil, err
}

// FindRunSampleSet returns which inputs a run's stored sample results came
// from; found is false when none are stored.
func (db *DB) FindRunSampleSet(ctx context.Context, runID int64) (s RunSampleSet, found bool, err error) {
	err = db.Reader(ctx).Where("run_id = ?", runID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s, false, nil
	}
	return s, err == nil, err
}

// sampleResultChunk is the rows of one INSERT of sample results: the SQLite
// driver binds a statement's parameters in time quadratic in their number
// (most of the time of 1,000-row statements of 19 columns went there), so
// a smaller statement is faster here than the parameter limit allows.
const sampleResultChunk = 100

// summaryCacheKiB is SQLite's page cache while a large run's sample
// results are written (a negative cache_size is in KiB): 64 MiB, held only
// for that transaction.
const summaryCacheKiB = -64 << 10

// SaveRunSummary stores a summary, replacing the run's summary of the same
// variant. With samples non-nil, the run's sample results are replaced by
// them in the same transaction (inserted in chunks) and recorded as coming
// from sampleKey.
func (db *DB) SaveRunSummary(ctx context.Context, s RunSummary, sampleKey string, perCriterion int, samples []RunSampleResult) error {
	if err := db.saveRunSummary(ctx, s, sampleKey, perCriterion, samples); err != nil {
		return err
	}
	db.analyzeFilled(ctx, "run_sample_results", len(samples))
	return nil
}

func (db *DB) saveRunSummary(ctx context.Context, s RunSummary, sampleKey string, perCriterion int, samples []RunSampleResult) error {
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			// Two first reads of a run storing at once take turns (on
			// SQLite the write lock does this): the second replaces the
			// first's rows instead of colliding with them.
			var id int64
			if err := tx.Raw("SELECT id FROM runs WHERE id = ? FOR UPDATE", s.RunID).Scan(&id).Error; err != nil {
				return err
			}
		}
		if samples != nil && tx.Dialector.Name() == "sqlite" && len(samples) > sampleResultChunk {
			// Each sample result goes into the table and its nine order
			// indexes: past SQLite's default page cache (2 MiB) the dirty
			// pages of a large run spill to the WAL file mid-transaction, a
			// write system call each, and at 100,000 samples that was half
			// the time of storing the summary. The cache is the connection's
			// own, so it is enlarged for this transaction and put back.
			var was int64
			if err := tx.Raw("PRAGMA cache_size").Scan(&was).Error; err != nil {
				return err
			}
			if err := tx.Exec(fmt.Sprintf("PRAGMA cache_size = %d", summaryCacheKiB)).Error; err != nil {
				return err
			}
			defer tx.Exec(fmt.Sprintf("PRAGMA cache_size = %d", was))
		}
		if samples != nil {
			if err := tx.Where("run_id = ?", s.RunID).Delete(&RunSampleResult{}).Error; err != nil {
				return err
			}
			for start := 0; start < len(samples); start += sampleResultChunk {
				part := samples[start:min(start+sampleResultChunk, len(samples))]
				if err := tx.Create(&part).Error; err != nil {
					return err
				}
			}
			set := RunSampleSet{RunID: s.RunID, InputKey: sampleKey, Samples: perCriterion, ComputedAt: s.ComputedAt}
			if err := tx.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "run_id"}},
				DoUpdates: clause.AssignmentColumns([]string{"input_key", "samples", "computed_at"}),
			}).Create(&set).Error; err != nil {
				return err
			}
		}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "run_id"}, {Name: "variant"}},
			DoUpdates: clause.AssignmentColumns([]string{"input_key", "summary", "computed_at"}),
		}).Create(&s).Error
	})
}

// SampleOrders are the orders of a run's stored sample results, each the
// column holding a sample's rank in it: sort key, then "asc" or "desc".
var sampleOrders = map[[2]string]string{
	{"position", "asc"}: "rank_position", {"position", "desc"}: "rank_position DESC",
	{"score", "asc"}: "rank_score_asc", {"score", "desc"}: "rank_score_desc",
	{"human", "asc"}: "rank_human_asc", {"human", "desc"}: "rank_human_desc",
	{"diff", "asc"}: "rank_diff_asc", {"diff", "desc"}: "rank_diff_desc",
	{"missing", "asc"}: "rank_missing_asc", {"missing", "desc"}: "rank_missing_desc",
	// The review queue's order by spread between rounds (not the results
	// page's: NULL in results stored before 00038).
	{"spread", "desc"}: "rank_spread_desc",
}

// SampleResultPage asks for one page of a run's stored sample results on
// one criterion.
type SampleResultPage struct {
	RunID     int64
	Criterion int
	// Sort is "position", "score", "human", "diff" or "missing"; Dir "asc"
	// or "desc".
	Sort, Dir string
	// OnlyMissing keeps the samples with at least one unreadable round.
	OnlyMissing   bool
	Offset, Limit int
	// Total is the number of samples per criterion (the run's dataset rows).
	Total int
}

// ListRunSampleResults returns one page of a run's stored sample results,
// in the order asked, reading only that page's rows through the order's
// index.
func (db *DB) ListRunSampleResults(ctx context.Context, p SampleResultPage) ([]RunSampleResult, error) {
	order, ok := sampleOrders[[2]string{p.Sort, p.Dir}]
	if !ok {
		return nil, Errorf(EInvalid, "unknown sample order %q %q", p.Sort, p.Dir)
	}
	q := db.Reader(ctx).Where("run_id = ? AND criterion_index = ?", p.RunID, p.Criterion)
	if p.OnlyMissing {
		q = q.Where("missing > 0").Order(order).Offset(p.Offset).Limit(p.Limit)
	} else {
		// Ranks are dense from 0, so a page is a range of the index: no
		// row before it is read, whatever the page.
		col, desc := cutDesc(order)
		if desc {
			hi := p.Total - 1 - p.Offset
			q = q.Where(fmt.Sprintf("%s BETWEEN ? AND ?", col), hi-p.Limit+1, hi).Order(order)
		} else {
			q = q.Where(fmt.Sprintf("%s BETWEEN ? AND ?", col), p.Offset, p.Offset+p.Limit-1).Order(order)
		}
	}
	var out []RunSampleResult
	err := q.Find(&out).Error
	return out, err
}

// cutDesc splits "col DESC" into its column and direction.
func cutDesc(order string) (col string, desc bool) {
	return strings.CutSuffix(order, " DESC")
}

// EachDatasetRowChunk calls fn with the dataset's rows in file order
// (position, then id for rows stored with the same position), size at a
// time, reading only cols ("" for every column) through the read pool.
// Keyset paging: each chunk starts after the last row read, so no chunk
// re-reads the rows before it and a large dataset costs what its rows do.
func (db *DB) EachDatasetRowChunk(ctx context.Context, datasetID int64, size int, cols string, fn func([]DatasetRow) error) error {
	return eachDatasetChunk(db, ctx, datasetID, size, cols, func(r *DatasetRow) (int, int64) { return r.Position, r.ID }, fn)
}

// RawDatasetRow is a dataset row's id, place and identifier with its
// fields as stored: the JSON text, not decoded. A search that reads every
// row decodes only those whose text may match (report.MatchingRows).
type RawDatasetRow struct {
	ID         int64
	Position   int
	ExternalID string
	Data       []byte
}

// EachRawDatasetRowChunk is EachDatasetRowChunk of the rows' fields as
// stored (RawDatasetRow), without their ratings.
func (db *DB) EachRawDatasetRowChunk(ctx context.Context, datasetID int64, size int, fn func([]RawDatasetRow) error) error {
	return eachDatasetChunk(db, ctx, datasetID, size, "id, position, external_id, data",
		func(r *RawDatasetRow) (int, int64) { return r.Position, r.ID }, fn)
}

// eachDatasetChunk is the keyset walk of EachDatasetRowChunk into rows of
// type T, whose place key returns.
func eachDatasetChunk[T any](db *DB, ctx context.Context, datasetID int64, size int, cols string, key func(*T) (int, int64), fn func([]T) error) error {
	first := true
	var lastPos int
	var lastID int64
	for {
		var rows []T
		q := db.Reader(ctx).Table("dataset_rows").Where("dataset_id = ?", datasetID)
		if cols != "" {
			q = q.Select(cols)
		}
		if !first {
			q = q.Where("position >= ? AND (position > ? OR id > ?)", lastPos, lastPos, lastID)
		}
		if err := q.Order("position, id").Limit(size).Find(&rows).Error; err != nil {
			return fmt.Errorf("read the rows of dataset %d: %w", datasetID, err)
		}
		if len(rows) == 0 {
			return nil
		}
		if err := fn(rows); err != nil {
			return err
		}
		if len(rows) < size {
			return nil
		}
		first = false
		lastPos, lastID = key(&rows[len(rows)-1])
	}
}

// SampleRank is a stored sample result's place in one order.
type SampleRank struct {
	RowID   int64
	Missing int
	Rank    int `gorm:"column:sort_rank"`
}

// ListRunSampleRanks returns the rank in the order sort, dir of the stored
// results of the given rows on one criterion (in no particular order).
func (db *DB) ListRunSampleRanks(ctx context.Context, runID int64, criterion int, sort, dir string, rowIDs []int64) ([]SampleRank, error) {
	order, ok := sampleOrders[[2]string{sort, dir}]
	if !ok {
		return nil, Errorf(EInvalid, "unknown sample order %q %q", sort, dir)
	}
	col, desc := cutDesc(order)
	var out []SampleRank
	const chunk = 500 // ids per IN list, far under either dialect's parameter limit
	for start := 0; start < len(rowIDs); start += chunk {
		var part []SampleRank
		err := db.Reader(ctx).Model(&RunSampleResult{}).Select("row_id, missing, "+col+" AS sort_rank").
			Where("run_id = ? AND criterion_index = ? AND row_id IN ?", runID, criterion, rowIDs[start:min(start+chunk, len(rowIDs))]).
			Scan(&part).Error
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	if desc {
		// Descending position: the rank read is the ascending one.
		for i := range out {
			out[i].Rank = -out[i].Rank
		}
	}
	return out, nil
}

// ListRunSampleResultsOf returns the stored results of the given rows on
// one criterion, keyed by row id.
func (db *DB) ListRunSampleResultsOf(ctx context.Context, runID int64, criterion int, rowIDs []int64) (map[int64]RunSampleResult, error) {
	var rows []RunSampleResult
	if err := db.Reader(ctx).Where("run_id = ? AND criterion_index = ? AND row_id IN ?", runID, criterion, rowIDs).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[int64]RunSampleResult, len(rows))
	for _, r := range rows {
		out[r.RowID] = r
	}
	return out, nil
}
