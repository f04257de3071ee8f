package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// BenchmarkAlignmentAccept times, on SQLite, accepting an alignment's
// draft (POST /alignments/:id/accept) and launching its held-out runs
// again (POST /alignments/:id/heldout) through the Echo app, on a finished
// synthesized run of BATCHEVAL_BENCH_ACCEPT samples (comma-separated
// sizes; 10,000 by default; as BenchmarkAlignmentStart's, its figures
// stored, a stored rubric) whose report reads one browser rating of every
// sample on its first criterion, half held out. Each accept is of an
// alignment of its own (started before the clock runs); each launch again
// follows the deletion of the runs its accept launched. Each is timed as
// served and until the alignment has both runs and its held-out copy
// (launched in the background for a large part). Medians of three;
// with BATCHEVAL_BENCH_ACCEPT_PROFILE=file, a CPU profile of the accepts.
// Run with -benchtime=1x.
func BenchmarkAlignmentAccept(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_ACCEPT"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_ACCEPT=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	post := func(e http.Handler, path string, form url.Values) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		e.ServeHTTP(rec, req)
		return rec
	}
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			// The runs' jobs are queued (no worker takes them).
			mustB(b, runner.Migrate(ctx, h.DB, nil))
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			rub := models.Rubric{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, Name: "synth", Task: run.RubricSnapshot.Task,
				Fields: run.RubricSnapshot.Fields, Criteria: run.RubricSnapshot.Criteria}
			mustB(b, h.DB.SaveRubric(ctx, &rub))
			mustB(b, h.DB.Gorm.Exec("UPDATE runs SET rubric_id = ?, rubric_version = 1, simulated = ? WHERE id = ?", rub.ID, true, src).Error)
			crit := run.RubricSnapshot.Criteria[0]
			reviews := make([]models.ReviewRating, len(ids))
			for k, id := range ids {
				v := crit.Lo + float64(k%int(crit.Hi-crit.Lo+1))
				reviews[k] = models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name, HumanColumn: crit.HumanColumn,
					Reviewer: "bench", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: time.Now().UTC()}
			}
			mustB(b, h.DB.Gorm.CreateInBatches(reviews, 500).Error)
			_, err = h.DB.SetRunHumanSource(ctx, p.WorkspaceID, src, models.HumansBrowser, "bench")
			mustB(b, err)
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			b.Logf("%d samples: synthesized, rated and stored in %v", n, time.Since(start).Round(time.Millisecond))

			reps := 3
			if v, err := strconv.Atoi(os.Getenv("BATCHEVAL_BENCH_ACCEPT_REPS")); err == nil && v > 0 {
				reps = v
			}
			// The copy alone, the way before (every held-out row read
			// into a map, written from a slice of them all) and now
			// (streamed), on the held-out part of the first alignment.
			run, err = h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			_, held := align.Split(ids, 1, align.DefaultHeldOutShare)
			median := func(fn func()) time.Duration {
				var took []time.Duration
				for range reps {
					t0 := time.Now()
					fn()
					took = append(took, time.Since(t0))
				}
				slices.Sort(took)
				return took[len(took)/2]
			}
			var heapBefore, heapAfter uint64
			peakOf := func(peak *uint64, fn func()) func() {
				return func() {
					p := startHeapPeak()
					fn()
					*peak = max(*peak, p.Stop())
				}
			}
			copyBefore := median(peakOf(&heapBefore, func() { benchCopyMaterialised(b, h.DB, ds, held) }))
			copyAfter := median(peakOf(&heapAfter, func() { benchCopyStreamed(b, h.DB, ds, held) }))
			b.Logf("%d samples, %d held out: the copy alone, every row held then written %v (peak heap %d MB), streamed %v (%d MB) (%.2fx; medians of %d)",
				n, len(held), copyBefore.Round(time.Millisecond), heapBefore>>20, copyAfter.Round(time.Millisecond), heapAfter>>20,
				float64(copyBefore)/float64(copyAfter), reps)
			b.ReportMetric(float64(heapBefore>>20), fmt.Sprintf("%dk-copy-heap-MB-before", n/1000))
			b.ReportMetric(float64(heapAfter>>20), fmt.Sprintf("%dk-copy-heap-MB-after", n/1000))
			b.ReportMetric(float64(copyBefore)/float64(copyAfter), fmt.Sprintf("%dk-copy-before/after", n/1000))

			stopProfile := startBenchProfile(b, os.Getenv("BATCHEVAL_BENCH_ACCEPT_PROFILE"))
			was := h.heldOutInline
			for _, mode := range []struct {
				name   string
				inline int
			}{{"in the request", 1 << 40}, {"as served now", was}} {
				h.heldOutInline = mode.inline
				var accepts, relaunches, acceptsDone, relaunchesDone []time.Duration
				for range reps {
					rec := post(e, fmt.Sprintf("/runs/%d/align", src), url.Values{"criterion": {"0"}, "seed": {"1"}, "held_out_percent": {"50"}})
					if rec.Code != http.StatusSeeOther {
						b.Fatalf("start: %d %.500s", rec.Code, rec.Body)
					}
					page := rec.Header().Get("Location")
					aID, _ := strconv.ParseInt(strings.TrimPrefix(page, "/alignments/"), 10, 64)
					a, err := h.DB.FindAlignment(ctx, p.WorkspaceID, aID)
					mustB(b, err)
					form := url.Values{"low": {a.Draft.Levels.Low}, "middle": {a.Draft.Levels.Middle}, "high": {"New high."}}
					for _, ex := range a.Draft.Examples {
						form.Add("example_id", ex.SampleID)
						form.Add("example_score", strconv.FormatFloat(ex.Score, 'f', -1, 64))
						form.Add("example_reason", ex.Reason)
					}
					t0 := time.Now()
					rec = post(e, page+"/accept", form)
					accepts = append(accepts, time.Since(t0))
					if rec.Code != http.StatusSeeOther || strings.Contains(flashOf(rec), "could not") {
						b.Fatalf("accept: %d %.500s %s", rec.Code, rec.Body, flashOf(rec))
					}
					heldOutLaunched(b, h, p.WorkspaceID, aID, len(held))
					acceptsDone = append(acceptsDone, time.Since(t0))
					a, err = h.DB.FindAlignment(ctx, p.WorkspaceID, aID)
					mustB(b, err)
					// The runs deleted (and the workspace's places freed):
					// the page offers to launch them again.
					mustB(b, h.DB.Gorm.Exec("DELETE FROM runs WHERE id IN ?", []int64{*a.BeforeRunID, *a.AfterRunID}).Error)
					t0 = time.Now()
					rec = post(e, page+"/heldout", url.Values{})
					relaunches = append(relaunches, time.Since(t0))
					if rec.Code != http.StatusSeeOther || strings.Contains(flashOf(rec), "could not") {
						b.Fatalf("launch again: %d %.500s %s", rec.Code, rec.Body, flashOf(rec))
					}
					heldOutLaunched(b, h, p.WorkspaceID, aID, len(held))
					relaunchesDone = append(relaunchesDone, time.Since(t0))
				}
				for _, d := range [][]time.Duration{accepts, relaunches, acceptsDone, relaunchesDone} {
					slices.Sort(d)
				}
				m := len(accepts) / 2
				b.Logf("%d samples, %d held out, launched %s: accept served in %v, its runs launched %v after it was sent; launch again served in %v, its runs launched %v after (medians of %d; all %v, %v, %v, %v)",
					n, len(held), mode.name, accepts[m].Round(time.Millisecond), acceptsDone[m].Round(time.Millisecond), relaunches[m].Round(time.Millisecond),
					relaunchesDone[m].Round(time.Millisecond), reps, accepts, acceptsDone, relaunches, relaunchesDone)
				b.ReportMetric(float64(accepts[m].Milliseconds()), fmt.Sprintf("%dk-accept-ms(%s)", n/1000, strings.ReplaceAll(mode.name, " ", "-")))
				b.ReportMetric(float64(relaunches[m].Milliseconds()), fmt.Sprintf("%dk-again-ms(%s)", n/1000, strings.ReplaceAll(mode.name, " ", "-")))
				b.ReportMetric(float64(acceptsDone[m].Milliseconds()), fmt.Sprintf("%dk-launched-ms(%s)", n/1000, strings.ReplaceAll(mode.name, " ", "-")))
			}
			h.heldOutInline = was
			stopProfile()
		}
	}
}

// benchCopyMaterialised copies rows ids of ds into a dataset of their own
// as launching held-out runs did before: every row read into a map
// (FindDatasetRows), sorted, and written from one slice (CreateDataset).
func benchCopyMaterialised(b *testing.B, db *models.DB, ds models.Dataset, ids []int64) {
	ctx := context.Background()
	found, err := db.FindDatasetRows(ctx, ds.ID, ids)
	mustB(b, err)
	rows := make([]models.DatasetRow, 0, len(found))
	for _, r := range found {
		rows = append(rows, models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: r.Data, Ratings: r.Ratings})
	}
	slices.SortFunc(rows, func(x, y models.DatasetRow) int { return x.Position - y.Position })
	for i := range rows {
		rows[i].Position = i
	}
	held := benchCopyOf(ds, "materialised")
	mustB(b, db.CreateDataset(ctx, &held, rows))
}

// benchCopyStreamed is benchCopyMaterialised as runner.LaunchHeldOut
// copies now: the rows' places in file order, then the rows a chunk at a
// time into ImportDataset.
func benchCopyStreamed(b *testing.B, db *models.DB, ds models.Dataset, ids []int64) {
	ctx := context.Background()
	order, err := db.DatasetRowsInFileOrder(ctx, ds.ID, ids)
	mustB(b, err)
	held := benchCopyOf(ds, "streamed")
	mustB(b, db.ImportDataset(ctx, &held, func(put func(models.DatasetRow) error) error {
		position := 0
		return db.EachDatasetRowByID(ctx, ds.ID, order, func(r models.DatasetRow) error {
			position++
			return put(models.DatasetRow{Position: position - 1, ExternalID: r.ExternalID, Data: r.Data, Ratings: r.Ratings})
		})
	}))
}

// benchCopyOf is a dataset to copy ds's rows into.
func benchCopyOf(ds models.Dataset, how string) models.Dataset {
	parent := ds.ID
	return models.Dataset{WorkspaceID: ds.WorkspaceID, ProjectID: ds.ProjectID, Name: ds.Name + " " + how, Format: ds.Format, IDColumn: ds.IDColumn,
		Columns: ds.Columns, Fields: ds.Fields, RatingColumns: ds.RatingColumns, ParentDatasetID: &parent, CreatedAt: time.Now().UTC()}
}

// heldOutLaunched waits until alignment aID of workspace ws has both
// held-out runs and a held-out copy of held rows.
func heldOutLaunched(b *testing.B, h *Handlers, ws, aID int64, held int) {
	b.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		a, err := h.DB.FindAlignment(ctx, ws, aID)
		mustB(b, err)
		if a.BeforeRunID != nil && a.AfterRunID != nil && a.HeldOutDatasetID != nil {
			if _, err := h.DB.FindRun(ctx, ws, *a.AfterRunID); err == nil {
				ds, err := h.DB.FindDataset(ctx, ws, *a.HeldOutDatasetID)
				mustB(b, err)
				if ds.RowCount != held {
					b.Fatalf("held-out copy of %d rows, want %d", ds.RowCount, held)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("alignment %d: no held-out runs after 10 minutes (dataset %v, runs %v and %v)", aID, a.HeldOutDatasetID, a.BeforeRunID, a.AfterRunID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startBenchProfile writes a CPU profile to path (none when "") until the
// function it returns is called.
func startBenchProfile(b *testing.B, path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	mustB(b, err)
	mustB(b, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		mustB(b, f.Close())
	}
}
