package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// RunStats is a run's stored statistics for one criterion: the figures
// that are expensive to compute (bootstrap intervals), encoded by the
// report package, with the hash of the inputs they were computed from.
type RunStats struct {
	RunID          int64 `gorm:"primaryKey;autoIncrement:false"`
	CriterionIndex int   `gorm:"primaryKey;autoIncrement:false"`
	// Variant names the report options the figures depend on (the
	// system column).
	Variant    string `gorm:"primaryKey"`
	InputHash  string
	Stats      string
	ComputedAt time.Time
}

// TableName is run_stats.
func (RunStats) TableName() string { return "run_stats" }

// ListRunStats returns every stored statistics row of a run.
func (db *DB) ListRunStats(ctx context.Context, runID int64) ([]RunStats, error) {
	var out []RunStats
	err := db.Reader(ctx).Where("run_id = ?", runID).Find(&out).Error
	return out, err
}

// SaveRunStats stores rows, replacing what was stored for the same run,
// criterion and variant.
func (db *DB) SaveRunStats(ctx context.Context, rows []RunStats) error {
	if len(rows) == 0 {
		return nil
	}
	return db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "run_id"}, {Name: "criterion_index"}, {Name: "variant"}},
		DoUpdates: clause.AssignmentColumns([]string{"input_hash", "stats", "computed_at"}),
	}).Create(&rows).Error
}
