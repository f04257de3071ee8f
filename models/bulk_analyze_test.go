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

// statsRows counts the planner's statistics of a table's columns
// (pg_stats), 0 while it was never analyzed.
func statsRows(t *testing.T, db *models.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm.Raw("SELECT COUNT(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = ?", table).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBulkWritesAnalyzeOnPostgres: on a fresh PostgreSQL database a large
// import left dataset_rows never analyzed until autovacuum came, a minute
// or more later, and meanwhile the planner sized it from its pages alone
// (a run's start read its rows in chunks each planned as a scan and sort
// of every row after it). A write of at least 10,000 rows now analyzes its
// table once committed: the import's dataset_rows (and the page of rows
// is then read in order through dataset_rows_position, no Sort), a
// round's run_batches, a run's stored sample results. A small write
// leaves it to autovacuum (an ANALYZE reads up to 30,000 rows).
func TestBulkWritesAnalyzeOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("stores about 40,000 rows")
	}
	const n = 10000
	for _, d := range dbtest.Dialects {
		if d != models.Postgres {
			continue
		}
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.Open(t, d)
			w := newWorld(t, db)
			for _, table := range []string{"dataset_rows", "run_batches", "run_sample_results"} {
				if got := statsRows(t, db, table); got != 0 {
					t.Fatalf("%s has %d statistics before the test's writes: a fresh database has none", table, got)
				}
			}
			put := func(size int) models.Dataset {
				ds := models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: fmt.Sprintf("import of %d", size), Format: "csv",
					Columns: []string{"text", "score"}, Fields: w.dataset.Fields, RatingColumns: []string{"score"}}
				if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
					for i := range size {
						v := float64(i % 5)
						if err := put(models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%d", i+1),
							Data: map[string]string{"text": fmt.Sprintf("sample %d", i+1)}, Ratings: map[string]*float64{"score": &v}}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return ds
			}
			put(n - 1)
			if got := statsRows(t, db, "dataset_rows"); got != 0 {
				t.Errorf("an import of %d rows analyzed dataset_rows (%d statistics): small writes are left to autovacuum", n-1, got)
			}
			ds := put(n)
			if got := statsRows(t, db, "dataset_rows"); got == 0 {
				t.Errorf("an import of %d rows left dataset_rows never analyzed", n)
			}
			var plan []string
			if err := db.Gorm.Raw(`EXPLAIN SELECT * FROM dataset_rows WHERE dataset_id = ? ORDER BY position LIMIT 25`, ds.ID).Scan(&plan).Error; err != nil {
				t.Fatal(err)
			}
			if p := strings.Join(plan, "\n"); strings.Contains(p, "Sort") || !strings.Contains(p, "dataset_rows_position") {
				t.Errorf("the dataset page's rows after the import are planned as:\n%s\nwant them read in order through dataset_rows_position", p)
			}

			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: ds.ID, RubricID: &w.rubric.ID,
				JudgeID: &w.judge.ID, Name: "big run", Method: models.MethodBatchEval, RubricSnapshot: w.rubric.Evaluator(),
				JudgeSnapshot: w.judge.Snapshot(), CreatedAt: time.Now()}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			var rowIDs []int64
			if err := db.Gorm.Raw("SELECT id FROM dataset_rows WHERE dataset_id = ? ORDER BY position", ds.ID).Scan(&rowIDs).Error; err != nil {
				t.Fatal(err)
			}
			ids := make([][]int64, n)
			for i := range ids {
				ids[i] = []int64{rowIDs[i]}
			}
			if _, err := db.CreateRoundBatches(ctx, r.ID, 0, 0, ids[:n-1]); err != nil {
				t.Fatal(err)
			}
			if got := statsRows(t, db, "run_batches"); got != 0 {
				t.Errorf("a round of %d batches analyzed run_batches (%d statistics): small writes are left to autovacuum", n-1, got)
			}
			if _, err := db.CreateRoundBatches(ctx, r.ID, 0, 1, ids); err != nil {
				t.Fatal(err)
			}
			if got := statsRows(t, db, "run_batches"); got == 0 {
				t.Errorf("a round of %d batches left run_batches never analyzed", n)
			}

			samples := make([]models.RunSampleResult, n)
			for i := range samples {
				samples[i] = models.RunSampleResult{RunID: r.ID, RowID: rowIDs[i], Position: i + 1, Rounds: "[]", RankPosition: i, RankScoreAsc: i, RankScoreDesc: i,
					RankHumanAsc: i, RankHumanDesc: i, RankDiffAsc: i, RankDiffDesc: i, RankMissingAsc: i, RankMissingDesc: i}
			}
			if err := db.SaveRunSummary(ctx, models.RunSummary{RunID: r.ID, InputKey: "k", Variant: "", Summary: "{}", ComputedAt: time.Now()}, "k", n, samples); err != nil {
				t.Fatal(err)
			}
			if got := statsRows(t, db, "run_sample_results"); got == 0 {
				t.Errorf("%d stored sample results left run_sample_results never analyzed", n)
			}

		})
	}
}
