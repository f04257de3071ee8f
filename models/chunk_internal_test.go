package models

import (
	"testing"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// TestChunkRowsBoundsParameters: a multi-row INSERT stays within the
// dialect's parameter limit, and on SQLite within the few hundred
// parameters its driver binds cheaply (a round of 100,000 batches in
// 1,000-row statements spent minutes binding before any judge call).
func TestChunkRowsBoundsParameters(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dialector gorm.Dialector
		most      int // parameters one statement may have
	}{
		{"sqlite", sqlite.Dialector{}, min(sqliteParamsPerStatement, sqliteMaxParams)},
		{"postgres", postgres.Dialector{Config: &postgres.Config{}}, postgresMaxParams},
	} {
		tx := &gorm.DB{Config: &gorm.Config{Dialector: tc.dialector}}
		for _, cols := range []int{1, 5, 10, 12, 40} {
			n := chunkRows(tx, cols)
			if n < 1 || n > maxChunkRows || n*cols > tc.most {
				t.Errorf("%s, %d columns: %d rows a statement (%d parameters), want 1 to %d rows and at most %d parameters",
					tc.name, cols, n, n*cols, maxChunkRows, tc.most)
			}
		}
	}
}
