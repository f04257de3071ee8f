package models_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkLongestDatasetRows finds the 10 longest rows of a dataset, as
// the launch form does once per dataset when the judge's context window is
// known (the handlers keep the answer). It reads every row's length:
// BATCHEVAL_BENCH_ROWS rows (default 100,000) of FED-sized text, one in
// 1,000 of them four times as long. "ms/scan" is the time of one search.
func BenchmarkLongestDatasetRows(b *testing.B) {
	n := 100_000
	if v := os.Getenv("BATCHEVAL_BENCH_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("BATCHEVAL_BENCH_ROWS=%q: want a whole number of at least 1000", v)
		}
	}
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			db := dbtest.Open(b, d)
			ctx := context.Background()
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			p := models.Project{WorkspaceID: ws.ID, Name: "bench"}
			if err := db.CreateProject(ctx, &p); err != nil {
				b.Fatal(err)
			}
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "long", Columns: []string{"id", "text"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
			turn := strings.Repeat("A: how was your weekend, did you get to the coast after all? ", 20)
			start := time.Now()
			err = db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := range n {
					text := turn
					if i%1000 == 999 {
						text = strings.Repeat(turn, 4)
					}
					id := fmt.Sprintf("s%07d", i)
					if err := put(models.DatasetRow{Position: i + 1, ExternalID: id, Data: map[string]string{"id": id, "text": text}}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			imported := time.Since(start)
			b.ResetTimer()
			for b.Loop() {
				rows, err := db.LongestDatasetRows(ctx, ds.ID, 10)
				if err != nil || len(rows) != 10 || len(rows[0].Data["text"]) != 4*len(turn) {
					b.Fatalf("longest rows: %d, %v", len(rows), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/scan")
			b.ReportMetric(float64(imported.Milliseconds()), "import-ms")
		})
	}
}
