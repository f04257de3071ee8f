package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestCancelledImportEndsOneWay: an import whose request is cancelled as
// it stores its last rows or commits (the client gave up, a proxy timed
// out) either stored the dataset and says so, or stored nothing, ever.
// A cancel that reached the commit in flight made the client report the
// cancel while PostgreSQL went on to commit: the caller, told nothing was
// stored, kept the upload for a retry that imported the dataset twice.
// Both ways of importing: streamed (ImportDataset, a file's rows) and
// whole (CreateDataset, a file with one row per annotator).
func TestCancelledImportEndsOneWay(t *testing.T) {
	const rows = 2000
	text := strings.Repeat("a row of text to fill the chunks ", 4)
	row := func(r int) models.DatasetRow {
		return models.DatasetRow{Position: r, ExternalID: fmt.Sprintf("s%d", r), Data: map[string]string{"text": text}, Ratings: map[string]*float64{}}
	}
	// An import calls cancelAt(r) as it hands over row r (r = -1: before
	// it starts) and returns when it is done.
	type importer func(db *models.DB, ctx context.Context, ds *models.Dataset, cancelAt func(r int)) error
	streamed := func(db *models.DB, ctx context.Context, ds *models.Dataset, cancelAt func(int)) error {
		return db.ImportDataset(ctx, ds, func(put func(models.DatasetRow) error) error {
			for r := range rows {
				cancelAt(r)
				if err := put(row(r)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	whole := func(db *models.DB, ctx context.Context, ds *models.Dataset, cancelAt func(int)) error {
		all := make([]models.DatasetRow, rows)
		for r := range all {
			all[r] = row(r)
		}
		cancelAt(-1)
		return db.CreateDataset(ctx, ds, all)
	}
	tests := []struct {
		name string
		run  importer
		// at is the row at whose handing over case i starts the clock of
		// its cancel: from there on, the import's end is timed and the
		// cancels spread over it.
		at func(i int) int
	}{
		// Even cases once the last row is handed over (the last chunk,
		// the notes and the commit are left), odd ones a chunk before.
		{"streamed", streamed, func(i int) int { return rows - 1 - (i%2)*500 }},
		{"whole", whole, func(int) int { return -1 }},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		db.ImportChunkRows = 500
		dataset := func(name string) models.Dataset {
			return models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: name, Format: "csv",
				Columns: []string{"text"}, Fields: w.dataset.Fields, RatingColumns: []string{}}
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				// How long the end of an import takes here, from the row
				// where cancels start.
				var tail time.Duration
				for i := range 3 {
					var from time.Time
					ds := dataset(fmt.Sprintf("%s timed %d", tc.name, i))
					err := tc.run(db, t.Context(), &ds, func(r int) {
						if r == tc.at(0) {
							from = time.Now()
						}
					})
					if err != nil {
						t.Fatal(err)
					}
					tail = max(tail, time.Since(from))
				}
				stored, refused := 0, 0
				for i := range 60 {
					ctx, cancel := context.WithCancel(t.Context())
					name := fmt.Sprintf("%s cancelled %d", tc.name, i)
					ds := dataset(name)
					delay := tail * time.Duration(i%20) / 16
					err := tc.run(db, ctx, &ds, func(r int) {
						switch {
						case r != tc.at(i):
						case delay == 0:
							cancel()
						default:
							time.AfterFunc(delay, cancel)
						}
					})
					cancel()
					// Whatever a cancel did, look a moment later, when a
					// commit still in flight has ended.
					time.Sleep(50 * time.Millisecond)
					var n, rowsStored int64
					db.Gorm.Table("datasets").Where("name = ?", name).Count(&n)
					db.Gorm.Table("dataset_rows").Where("dataset_id IN (?)", db.Gorm.Table("datasets").Select("id").Where("name = ?", name)).Count(&rowsStored)
					if err == nil {
						stored++
						if n != 1 || rowsStored != rows || ds.RowCount != rows {
							t.Fatalf("import %d reported success, yet %d datasets of that name hold %d rows (RowCount %d), want 1 of %d", i, n, rowsStored, ds.RowCount, rows)
						}
						continue
					}
					refused++
					if n != 0 || rowsStored != 0 {
						t.Fatalf("import %d reported %v, yet %d datasets of that name are stored with %d rows", i, err, n, rowsStored)
					}
				}
				t.Logf("the end of an import takes %v; %d of 60 imports stored before the cancel, %d stopped", tail, stored, refused)
				if refused == 0 {
					t.Error("no import was stopped by its cancel: the test proves nothing about that side")
				}
			})
		}
	})
}
