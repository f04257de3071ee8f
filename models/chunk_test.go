package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestBulkInsertsPassParameterLimits stores more rows in one call than a
// single INSERT may bind on either database: a 70,001-row dataset, a round
// of 20,001 batches (one statement overflowed above 1,724 on SQLite and
// 3,449 on PostgreSQL) and a batch answer with 9,001 scores.
func TestBulkInsertsPassParameterLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("stores about 100,000 rows")
	}
	cases := []struct {
		name     string
		rows     int // dataset rows
		batches  int // batches of one round, one row each
		perBatch int // scores stored with the first batch's answer
	}{
		{name: "small", rows: 5, batches: 3, perBatch: 2},
		{name: "past every limit", rows: 70001, batches: 20001, perBatch: 9001},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rows := make([]models.DatasetRow, tc.rows)
				for i := range rows {
					v := float64(i % 5)
					rows[i] = models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%d", i+1),
						Data: map[string]string{"text": fmt.Sprintf("sample %d", i+1)}, Ratings: map[string]*float64{"score": &v}}
				}
				ds := models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: "big " + tc.name, Format: "csv",
					Columns: []string{"text", "score"}, Fields: w.dataset.Fields, RatingColumns: []string{"score"}}
				if err := db.CreateDataset(ctx, &ds, rows); err != nil {
					t.Fatalf("create dataset of %d rows: %v", tc.rows, err)
				}
				if got := count(t, db, "dataset_rows", "dataset_id = ?", ds.ID); got != int64(tc.rows) {
					t.Fatalf("stored %d rows, want %d", got, tc.rows)
				}
				last, err := db.ListDatasetRows(ctx, ds.ID, tc.rows-1, 1)
				if err != nil || len(last) != 1 || last[0].ExternalID != fmt.Sprintf("s%d", tc.rows) || last[0].ID != rows[tc.rows-1].ID {
					t.Fatalf("last row %+v (%v), want s%d with id %d", last, err, tc.rows, rows[tc.rows-1].ID)
				}

				r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: ds.ID, RubricID: &w.rubric.ID,
					JudgeID: &w.judge.ID, Name: "big run " + tc.name, Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
					JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
				if err := db.CreateRun(ctx, &r, nil); err != nil {
					t.Fatal(err)
				}
				ids := make([][]int64, tc.batches)
				for i := range ids {
					ids[i] = []int64{rows[i%tc.rows].ID}
				}
				bs, err := db.CreateRoundBatches(ctx, r.ID, 0, 0, ids)
				if err != nil {
					t.Fatalf("store a round of %d batches: %v", tc.batches, err)
				}
				if len(bs) != tc.batches {
					t.Fatalf("got %d batches back, want %d", len(bs), tc.batches)
				}
				seen := map[int64]bool{}
				for i, b := range bs {
					if b.ID == 0 || seen[b.ID] || b.BatchIndex != i {
						t.Fatalf("batch %d: id %d index %d (ids must be set and distinct)", i, b.ID, b.BatchIndex)
					}
					seen[b.ID] = true
				}
				if got := count(t, db, "run_batches", "run_id = ?", r.ID); got != int64(tc.batches) {
					t.Fatalf("stored %d batches, want %d", got, tc.batches)
				}
				stored, err := db.RoundBatches(ctx, r.ID, 0, 0)
				if err != nil || len(stored) != tc.batches || stored[tc.batches-1].ID != bs[tc.batches-1].ID {
					t.Fatalf("read the round back: %d batches (%v)", len(stored), err)
				}

				b := bs[0]
				b.Status = models.BatchDone
				scores := make([]models.RunScore, tc.perBatch)
				for i := range scores {
					v := float64(i%3 + 1)
					scores[i] = models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: rows[i%tc.rows].ID, Label: i + 1, Score: &v}
				}
				if err := db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: scores}); err != nil {
					t.Fatalf("store %d scores of one batch: %v", tc.perBatch, err)
				}
				if got := count(t, db, "run_scores", "batch_id = ?", b.ID); got != int64(tc.perBatch) {
					t.Fatalf("stored %d scores, want %d", got, tc.perBatch)
				}
			})
		}
	})
}

// TestImportDatasetStreams stores rows handed over one at a time in
// chunks, with the import notes the producer sets at its end, and stores
// nothing when the producer fails half-way (after several chunks were
// written) or gives no rows.
func TestImportDatasetStreams(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		tests := []struct {
			name    string
			rows    int
			failAt  int // 0: never
			wantErr string
		}{
			{name: "70,001 rows", rows: 70001},
			{name: "fails at row 25,000", rows: 30000, failAt: 25000, wantErr: "row 25000: broken"},
			{name: "no rows", rows: 0, wantErr: "no rows"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := count(t, db, "dataset_rows", "1 = 1")
				datasets := count(t, db, "datasets", "1 = 1")
				ds := models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: "streamed " + tc.name, Format: "csv",
					Fields: w.dataset.Fields, RatingColumns: []string{}}
				err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
					for i := 1; i <= tc.rows; i++ {
						if i == tc.failAt {
							return fmt.Errorf("row %d: broken", i)
						}
						if err := put(models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("r%d", i), Data: map[string]string{"text": "t"}}); err != nil {
							return err
						}
					}
					ds.Columns = []string{"text"}
					ds.ImportNotes = []string{`2 rows have an empty "<b>Text</b>"`}
					return nil
				})
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("ImportDataset error = %v, want %q", err, tc.wantErr)
					}
					if got := count(t, db, "dataset_rows", "1 = 1"); got != before {
						t.Errorf("%d rows stored by a failed import", got-before)
					}
					if got := count(t, db, "datasets", "1 = 1"); got != datasets {
						t.Errorf("a failed import left its dataset")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				stored, err := db.FindDataset(ctx, w.ws.ID, ds.ID)
				if err != nil || stored.RowCount != tc.rows || len(stored.Columns) != 1 {
					t.Fatalf("dataset %+v (%v), want %d rows and its columns", stored, err, tc.rows)
				}
				if got := count(t, db, "dataset_rows", "dataset_id = ?", ds.ID); got != int64(tc.rows) {
					t.Errorf("stored %d rows, want %d", got, tc.rows)
				}
				if want := []string{`2 rows have an empty "<b>Text</b>"`}; !slices.Equal(stored.ImportNotes, want) {
					t.Errorf("stored import notes %q, want %q", stored.ImportNotes, want)
				}
			})
		}
	})
}

// TestImportDatasetChunksRoundTrip imports rows in chunks of 7 (INSERTs on
// SQLite, COPY on PostgreSQL) and reads every row back as it was put: the
// counts around chunk boundaries, texts that need escaping, missing
// ratings kept as nil (never 0), and a failure after several chunks
// storing nothing.
func TestImportDatasetChunksRoundTrip(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		db.ImportChunkRows = 7
		makeRow := func(i int) models.DatasetRow {
			var q *float64
			if i%3 != 0 {
				v := float64(i) / 4
				q = &v
			}
			return models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("id-%d \"quoted\"", i),
				Data:    map[string]string{"text": fmt.Sprintf("line %d\n<b>&</b> \t é 😀 \\", i), "system": ""},
				Ratings: map[string]*float64{"quality": q}}
		}
		for _, tc := range []struct {
			rows, failAt int
		}{{1, 0}, {7, 0}, {15, 0}, {22, 0}, {30, 23}} {
			t.Run(fmt.Sprintf("%d rows fail at %d", tc.rows, tc.failAt), func(t *testing.T) {
				before := count(t, db, "dataset_rows", "1 = 1")
				ds := models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: fmt.Sprintf("chunks %d/%d", tc.rows, tc.failAt), Format: "csv",
					Columns: []string{"text", "system", "quality"}, Fields: w.dataset.Fields, RatingColumns: []string{"quality"}}
				err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
					for i := 1; i <= tc.rows; i++ {
						if i == tc.failAt {
							return fmt.Errorf("row %d: broken", i)
						}
						if err := put(makeRow(i)); err != nil {
							return err
						}
					}
					return nil
				})
				if tc.failAt > 0 {
					if err == nil {
						t.Fatal("a failed import succeeded")
					}
					if got := count(t, db, "dataset_rows", "1 = 1"); got != before {
						t.Errorf("%d rows stored by a failed import", got-before)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
				if err != nil || len(got) != tc.rows || ds.RowCount != tc.rows {
					t.Fatalf("read back %d rows (%v), RowCount %d; want %d", len(got), err, ds.RowCount, tc.rows)
				}
				for i, r := range got {
					want := makeRow(i + 1)
					if r.Position != want.Position || r.ExternalID != want.ExternalID || r.Data["text"] != want.Data["text"] ||
						len(r.Data) != 2 || len(r.Ratings) != 1 {
						t.Fatalf("row %d = %+v, want %+v", i+1, r, want)
					}
					g, wq := r.Ratings["quality"], want.Ratings["quality"]
					if (g == nil) != (wq == nil) || (g != nil && *g != *wq) {
						t.Fatalf("row %d quality = %v, want %v", i+1, g, wq)
					}
				}
			})
		}
	})
}
