package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// BenchmarkDatasetRatingPages times the pages that summarise or check a
// dataset's ratings (the dataset page, the rubric editor, the launch
// form) on a synthetic dataset of 20,000 rows (BATCHEVAL_BENCH_RATING_ROWS
// to change it), with the dataset's summary of its ratings stored (as
// every import now stores it) and without (rating_stats cleared before
// each view: the page reads every row's ratings, as all three did before).
func BenchmarkDatasetRatingPages(b *testing.B) {
	n := 20000
	if v := os.Getenv("BATCHEVAL_BENCH_RATING_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("BATCHEVAL_BENCH_RATING_ROWS=%q is not a size", v)
		}
	}
	e, h, p := benchServer(b, models.SQLite)
	ctx := context.Background()
	ds, _ := synthDataset(b, h.DB, p, n)
	rubric := models.Rubric{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, Name: "Coherence", Task: "A reply to judge.",
		Criteria: []evaluator.Criterion{{Name: "Coherence", Description: "Holds together.", Lo: 1, Hi: 5, HumanColumn: "coherence"}}}
	mustB(b, h.DB.SaveRubric(ctx, &rubric))
	pages := []struct{ name, path string }{
		{"dataset", fmt.Sprintf("/datasets/%d", ds.ID)},
		{"rubric", fmt.Sprintf("/rubrics/%d/edit", rubric.ID)},
		{"launch", fmt.Sprintf("/projects/%d/runs/new?dataset=%d&rubric=%d", p.ID, ds.ID, rubric.ID)},
	}
	for _, stored := range []bool{false, true} {
		for _, pg := range pages {
			b.Run(fmt.Sprintf("rows=%d/summary-stored=%v/%s", n, stored, pg.name), func(b *testing.B) {
				for b.Loop() {
					if !stored {
						b.StopTimer()
						mustB(b, h.DB.Gorm.Exec("UPDATE datasets SET rating_stats = NULL WHERE id = ?", ds.ID).Error)
						b.StartTimer()
					}
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, pg.path, nil))
					if rec.Code != http.StatusOK {
						b.Fatalf("GET %s = %d: %.300s", pg.path, rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
