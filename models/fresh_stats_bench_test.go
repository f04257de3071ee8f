package models_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkRunStartReadNeverAnalyzed: a run's start reads its dataset's
// texts in chunks of 5,000 rows, each from where the previous ended
// (EachDatasetRowTexts' keyset on position). On a PostgreSQL table never
// analyzed (a fresh database after a large import, before autovacuum's
// first pass) the planner took the dataset for a few pages of rows and
// read each chunk by sorting every row after it: the whole read grew
// with the square of the dataset. The benchmark imports
// BATCHEVAL_BENCH_ROWS rows (200,000 by default), puts dataset_rows back
// to never analyzed (its statistics deleted, its size unknown, as
// before the import analyzed it: bulkAnalyzeRows), and times the read
// and the dataset page's second page of rows; then analyzes it, as an
// import of that size now does, and times them again, in one process.
// PostgreSQL only (a superuser, as ./scripts/with-postgres.sh's);
// -benchtime=1x:
//
//	BATCHEVAL_BENCH_ROWS=1000000 ./scripts/with-postgres.sh go test ./models -run '^$' -bench RunStartReadNeverAnalyzed -benchtime=1x -v
func BenchmarkRunStartReadNeverAnalyzed(b *testing.B) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("PostgreSQL only: run through ./scripts/with-postgres.sh")
	}
	n := 200000
	if v := os.Getenv("BATCHEVAL_BENCH_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("BATCHEVAL_BENCH_ROWS=%q: want a number of rows of at least 10", v)
		}
	}
	for b.Loop() {
		ctx := context.Background()
		db := dbtest.Open(b, models.Postgres)
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			b.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		if err := db.CreateProject(ctx, &p); err != nil {
			b.Fatal(err)
		}
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
			for i := range n {
				if err := put(models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%07d", i),
					Data: map[string]string{"text": fmt.Sprintf("Response %d: a reply to the request, judged for the benchmark", i)}}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		measure := func() (read, page time.Duration) {
			start := time.Now()
			seen := 0
			if err := db.EachDatasetRowTexts(ctx, ds.ID, []string{"text"}, 0, func(models.RowTexts) error { seen++; return nil }); err != nil {
				b.Fatal(err)
			}
			if seen != n {
				b.Fatalf("read %d rows, want %d", seen, n)
			}
			read = time.Since(start)
			start = time.Now()
			if _, err := db.ListDatasetRows(ctx, ds.ID, 25, 25); err != nil {
				b.Fatal(err)
			}
			return read, time.Since(start)
		}
		for _, q := range []string{
			"DELETE FROM pg_statistic WHERE starelid = 'dataset_rows'::regclass",
			"UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = 'dataset_rows'::regclass",
		} {
			if err := db.Gorm.Exec(q).Error; err != nil {
				b.Fatal(err)
			}
		}
		never, neverPage := measure()
		if err := db.Gorm.Exec("ANALYZE dataset_rows").Error; err != nil {
			b.Fatal(err)
		}
		analyzed, analyzedPage := measure()
		b.Logf("%d rows: run start read never analyzed %v, analyzed %v (%.1fx); second page of rows %v, %v",
			n, never.Round(time.Millisecond), analyzed.Round(time.Millisecond), float64(never)/float64(analyzed),
			neverPage.Round(time.Microsecond), analyzedPage.Round(time.Microsecond))
		b.ReportMetric(float64(never)/float64(analyzed), "never/analyzed")
		b.ReportMetric(analyzed.Seconds(), "analyzed-s")
	}
}
