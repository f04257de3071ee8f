package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// exportBenchChunk bounds the rows per INSERT when synthesizing a run:
// under SQLite's limit on bound variables for the widest row written.
const exportBenchChunk = 500

// synthExportRun stores a finished BatchEval run of n samples straight
// into db, as report's synthRun does but without prompts and answers (an
// export never reads them): two criteria with human ratings in the
// dataset's columns, two rounds, batches of 10, one score in 50
// unreadable.
func synthExportRun(tb testing.TB, db *models.DB, p models.Project, n int) int64 {
	tb.Helper()
	ds, ids := synthDataset(tb, db, p, n)
	return synthRunOn(tb, db, p, ds, ids, 0)
}

// synthDataset stores the dataset of synthExportRun (n rows, two rating
// columns) and returns it with its row ids in file order.
func synthDataset(tb testing.TB, db *models.DB, p models.Project, n int) (models.Dataset, []int64) {
	tb.Helper()
	now := time.Now().UTC()
	ds := models.Dataset{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, Name: fmt.Sprintf("synth %d", n), Format: "jsonl", RowCount: n, IDColumn: "id",
		Columns:       []string{"id", "context", "response", "coherence", "fluency"},
		Fields:        []evaluator.Field{{Column: "context", Label: "Context"}, {Column: "response", Label: "Response"}},
		RatingColumns: []string{"coherence", "fluency"}, CreatedAt: now}
	mustB(tb, db.Gorm.Create(&ds).Error)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 8)
	ids := make([]int64, 0, n)
	rows := make([]models.DatasetRow, 0, exportBenchChunk)
	flush := func() {
		if len(rows) > 0 {
			mustB(tb, db.Gorm.CreateInBatches(&rows, exportBenchChunk).Error)
			for _, r := range rows {
				ids = append(ids, r.ID)
			}
			rows = rows[:0]
		}
	}
	for i := range n {
		c, f := float64(1+i%5), float64(1+(i*7)%5)
		rows = append(rows, models.DatasetRow{DatasetID: ds.ID, Position: i, ExternalID: fmt.Sprintf("s%d", i),
			Data:    map[string]string{"context": fmt.Sprintf("Dialogue %d: %s", i, filler), "response": "A reply " + filler},
			Ratings: map[string]*float64{"coherence": &c, "fluency": &f}})
		if len(rows) == exportBenchChunk {
			flush()
		}
	}
	flush()
	return ds, ids
}

// synthRunOn stores a finished BatchEval run over ds's rows (ids, in file
// order): two criteria, two rounds, batches of 10, one score in 50
// unreadable. variant changes the scores (0 is synthExportRun's), so two
// runs of one dataset agree with the humans differently.
func synthRunOn(tb testing.TB, db *models.DB, p models.Project, ds models.Dataset, ids []int64, variant int) int64 {
	tb.Helper()
	now := time.Now().UTC()
	n := len(ids)
	rub := evaluator.Rubric{Task: "dialogue", Fields: ds.Fields, Criteria: []evaluator.Criterion{
		{Name: "Coherence", Lo: 1, Hi: 5, HumanColumn: "coherence"}, {Name: "Fluency", Lo: 1, Hi: 5, HumanColumn: "fluency"}}}
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = 2, 10
	batchCount := len(rub.Criteria) * s.Rounds * ((n + s.BatchSize - 1) / s.BatchSize)
	name := ds.Name
	if variant != 0 {
		name = fmt.Sprintf("%s v%d", ds.Name, variant)
	}
	run := models.Run{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, DatasetID: ds.ID, Name: name, Method: models.MethodBatchEval,
		Status: models.RunSucceeded, Settings: s, RubricSnapshot: rub, JudgeSnapshot: models.JudgeSnapshot{Name: "synth", Model: "synth"},
		CreatedAt: now, StartedAt: &now, FinishedAt: &now, BatchesTotal: batchCount, BatchesDone: batchCount}
	mustB(tb, db.Gorm.Create(&run).Error)
	var batches []models.RunBatch
	var scores []models.RunScore
	flushScores := func() {
		if len(batches) == 0 {
			return
		}
		mustB(tb, db.Gorm.CreateInBatches(&batches, 100).Error)
		for _, b := range batches {
			for k, id := range b.RowIDs {
				var v *float64
				if (int(id)+k+b.Round+variant)%50 != 0 {
					x := float64(1+(int(id)+b.Round+b.CriterionIndex)%9) / 2
					if variant != 0 && (int(id)*variant)%3 == 0 {
						// A third of the samples judged as the humans rated them.
						i := b.BatchIndex*s.BatchSize + k
						x = float64(1 + i%5)
						if b.CriterionIndex == 1 {
							x = float64(1 + (i*7)%5)
						}
					}
					v = &x
				}
				scores = append(scores, models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: b.CriterionIndex,
					Round: b.Round, RowID: id, Label: k + 1, Score: v})
			}
		}
		mustB(tb, db.Gorm.CreateInBatches(&scores, exportBenchChunk).Error)
		batches, scores = batches[:0], scores[:0]
	}
	for ci := range rub.Criteria {
		for round := range s.Rounds {
			for b := 0; b*s.BatchSize < n; b++ {
				batches = append(batches, models.RunBatch{RunID: run.ID, CriterionIndex: ci, Round: round, BatchIndex: b,
					RowIDs: ids[b*s.BatchSize : min(n, (b+1)*s.BatchSize)], Status: models.BatchDone,
					Problems: []string{}, Details: map[string]any{}, Calls: 1, Attempts: 1, DoneAt: &now})
				if len(batches) == 100 {
					flushScores()
				}
			}
		}
	}
	flushScores()
	return run.ID
}

func mustB(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// timedResponse is a response writer that keeps nothing: it records when
// the first and the second write came (the header line goes out alone,
// the first sample's line with the second) and counts the bytes.
type timedResponse struct {
	header        http.Header
	code          int
	start         time.Time
	first, second time.Duration
	writes        int
	n             int64
}

func (w *timedResponse) Header() http.Header { return w.header }
func (w *timedResponse) WriteHeader(c int)   { w.code = c }
func (w *timedResponse) Flush()              {}
func (w *timedResponse) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	switch w.writes++; w.writes {
	case 1:
		w.first = time.Since(w.start)
	case 2:
		w.second = time.Since(w.start)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// exportFigures are one export's measurements.
type exportFigures struct {
	first, second, total time.Duration
	bytes                int64
	peak                 uint64
}

// serveExport GETs path from the real Echo app and measures it.
func serveExport(b *testing.B, h http.Handler, path string) exportFigures {
	peak := startHeapPeak()
	w := &timedResponse{header: http.Header{}, start: time.Now()}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	f := exportFigures{first: w.first, second: w.second, total: time.Since(w.start), bytes: w.n}
	f.peak = peak.Stop()
	if w.code != http.StatusOK || w.n == 0 {
		b.Fatalf("GET %s = %d, %d bytes", path, w.code, w.n)
	}
	return f
}

// BenchmarkExportStream serves a finished run's CSV and JSON exports
// through the real Echo app on SQLite, for runs of 10,000 and 100,000
// samples (and 1,000,000 with BATCHEVAL_BENCH_MILLION=1) synthesized
// straight into the database (not timed): time to the first byte, to the
// first sample's line, in all, and the peak live heap above the heap at
// the start. The same figures for the report built whole and written by
// WriteCSV (the path before streaming), and for report.StreamJSON given a
// summary already in memory (the JSON export once its figures come from
// storage), are measured in the same process.
// Every figure is also reported as its ratio to the 10,000-sample run.
// Run with -benchtime=1x.
func BenchmarkExportStream(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("BATCHEVAL_BENCH_MILLION") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for b.Loop() {
		var base map[string]exportFigures
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			runID := synthExportRun(b, h.DB, p, n)
			ctx := context.Background()
			// The statistics are stored when a run finishes.
			if err := report.StoreStats(ctx, h.DB, p.WorkspaceID, runID); err != nil {
				b.Fatal(err)
			}
			got := map[string]exportFigures{"csv": serveExport(b, e, fmt.Sprintf("/runs/%d/export.csv", runID))}
			if n > 100_000 {
				// Building the whole report of a million samples takes
				// gigabytes: only the streamed CSV is measured there.
				logExport(b, "csv", n, got["csv"], base["csv"])
				continue
			}
			// Before streaming: the whole report built, then written.
			peak := startHeapPeak()
			w := &timedResponse{header: http.Header{}, start: time.Now()}
			rep, err := report.Build(ctx, h.DB, p.WorkspaceID, runID)
			if err == nil {
				err = rep.WriteCSV(w)
			}
			if err != nil {
				b.Fatal(err)
			}
			old := exportFigures{first: w.first, total: time.Since(w.start), bytes: w.n}
			old.peak = peak.Stop()
			got["csv-built"] = old
			// The JSON writer alone, its summary already in memory (what
			// the export costs once the figures are read from storage):
			// the summary is made before the heap is first sampled.
			sum := *rep
			sum.Criteria = slices.Clone(rep.Criteria)
			for i := range sum.Criteria {
				sum.Criteria[i].Samples = nil
			}
			rep = nil
			peak = startHeapPeak()
			w = &timedResponse{header: http.Header{}, start: time.Now()}
			if err := report.StreamJSON(ctx, h.DB, &sum, w); err != nil {
				b.Fatal(err)
			}
			js := exportFigures{first: w.first, second: w.second, total: time.Since(w.start), bytes: w.n}
			js.peak = peak.Stop()
			got["json-writer"] = js
			// Last: the JSON download keeps its built report in the
			// handlers' cache, and a large live heap lets garbage pile up
			// before the collector runs, which would inflate the peaks
			// measured after it.
			got["json"] = serveExport(b, e, fmt.Sprintf("/runs/%d/export.json", runID))
			if base == nil {
				base = got
			}
			for _, k := range []string{"csv", "json", "json-writer", "csv-built"} {
				logExport(b, k, n, got[k], base[k])
			}
		}
	}
}

// logExport logs one export's figures with their ratios to the smallest
// run's (f0) and reports them as metrics.
func logExport(b *testing.B, k string, n int, f, f0 exportFigures) {
	b.Logf("%s %d samples: first byte %v (x%.2f), first sample line %v (x%.2f), total %v (%d bytes), peak heap %.1f MiB (x%.2f)",
		k, n, f.first.Round(time.Millisecond), f.first.Seconds()/f0.first.Seconds(), f.second.Round(time.Millisecond),
		f.second.Seconds()/max(1e-9, f0.second.Seconds()), f.total.Round(time.Millisecond), f.bytes,
		float64(f.peak)/(1<<20), float64(f.peak)/float64(max(1, f0.peak)))
	b.ReportMetric(float64(f.first.Microseconds())/1000, fmt.Sprintf("%s-%dk-first-byte-ms", k, n/1000))
	b.ReportMetric(float64(f.peak)/(1<<20), fmt.Sprintf("%s-%dk-peak-heap-MiB", k, n/1000))
}
