package report

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// liveFigRowsEnv sets the rows of BenchmarkLiveFigureMemory's run (each
// row is two samples: two criteria). The default, 50,000 rows (100,000
// samples), takes about a minute; 500000 is the million samples.
const liveFigRowsEnv = "BATCHEVAL_BENCH_LIVEFIG"

// BenchmarkLiveFigureMemory: one computation of a running run's
// provisional figures (what the run page's live figures run in the
// background), its time, peak heap (live and garbage, sampled every 2 ms:
// heapPeaks), peak RSS (VmHWM) above the start, bytes allocated and the
// heap the report holds afterwards: BuildFigures against the code before
// livemem45 (buildFiguresBefore, a test file's) and against main's before
// livemem46 (buildFiguresKeepingRatings: the rows' ratings maps kept),
// in turn in one process; the reports must be equal. A synthesized run (synthRun: two
// criteria, two rounds, batches of 10) put back to running with its last
// batch undone (the first criterion's figures stored, as after its first
// view; the second's computed each time); SQLite, and PostgreSQL too when TEST_DATABASE_URL is set.
// It moved here from handlers in livemem46, with the code before, so that
// the baseline is not shipped.
//
//	./scripts/with-postgres.sh go test ./report -run '^$' -bench LiveFigureMemory -benchtime=1x -v
//	BATCHEVAL_BENCH_LIVEFIG=500000 go test ./report -run '^$' -bench LiveFigureMemory -benchtime=1x -timeout 60m -v
func BenchmarkLiveFigureMemory(b *testing.B) {
	n := 50_000
	if v := os.Getenv(liveFigRowsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("%s=%q: want a number of rows of at least 10", liveFigRowsEnv, v)
		}
	}
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	for b.Loop() {
		for _, d := range dialects {
			liveFigureMemory(b, d, n)
		}
	}
}

// liveComputation is one computation's measurements.
type liveComputation struct {
	took             time.Duration
	peakHeap, peakRS uint64
	// held is the heap the figures keep once computed (after a
	// collection, above the start).
	held uint64
	// alloc is the bytes allocated while computing (TotalAlloc).
	alloc uint64
	rep   *Report
}

func liveFigureMemory(b *testing.B, d models.Dialect, n int) {
	b.StopTimer()
	db := dbtest.Open(b, d)
	wsID, id := synthRun(b, db, n)
	must(b, db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	var last models.RunBatch
	must(b, db.Gorm.Where("run_id = ?", id).Order("criterion_index DESC, round DESC, batch_index DESC").Select("id").First(&last).Error)
	must(b, db.Gorm.Model(&models.RunBatch{}).Where("id = ?", last.ID).Update("status", models.BatchPending).Error)
	b.StartTimer()
	ctx := context.Background()
	one := func(build func(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error)) liveComputation {
		runtime.GC()
		debug.FreeOSMemory()
		rssStart := procStatusBytes("VmRSS:")
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM to VmRSS
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocStart, base := ms.TotalAlloc, ms.HeapAlloc
		stop := heapPeaks()
		start := time.Now()
		rep, err := build(ctx, db, wsID, id, Options{})
		took := time.Since(start)
		heap, _ := stop()
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc - allocStart
		must(b, err)
		var rss uint64
		if pk := procStatusBytes("VmHWM:"); pk > rssStart {
			rss = pk - rssStart
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		var held uint64
		if ms.HeapAlloc > base {
			held = ms.HeapAlloc - base
		}
		return liveComputation{took: took, peakHeap: heap, peakRS: rss, held: held, alloc: alloc, rep: rep}
	}
	// One computation first, not measured: it stores the finished
	// criterion's figures, which every later view reads (the running
	// criterion's are computed each time), so that no measured
	// computation pays for them alone.
	if _, err := BuildFigures(ctx, db, wsID, id, Options{}); err != nil {
		b.Fatal(err)
	}
	// Two at a million, in turn: the first computation reads a cold
	// database (its pages not yet cached), which costs it time.
	reps := 3
	if n > 100_000 {
		reps = 2
	}
	builds := []func(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error){
		BuildFigures, buildFiguresBefore, buildFiguresKeepingRatings}
	got := make([][]liveComputation, len(builds))
	for i := range reps {
		var first *Report
		for k := range builds {
			at := (k + i) % len(builds) // each starts in turn
			c := one(builds[at])
			if first == nil {
				first = c.rep
			} else if same, where := equalNaN(reflect.ValueOf(c.rep.Criteria), reflect.ValueOf(first.Criteria), "Criteria"); !same {
				b.Fatalf("the figures differ between the computations: %s", where)
			}
			c.rep = nil
			got[at] = append(got[at], c)
		}
		if len(first.Criteria) != 2 || len(first.Criteria[0].Samples) != n {
			b.Fatalf("%d criteria, want 2 of %d samples", len(first.Criteria), n)
		}
	}
	after, before, kept := got[0], got[1], got[2]
	med := func(cs []liveComputation, f func(liveComputation) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	const mib = 1 << 20
	heapOf := func(c liveComputation) float64 { return float64(c.peakHeap) / mib }
	rssOf := func(c liveComputation) float64 { return float64(c.peakRS) / mib }
	secs := func(c liveComputation) float64 { return c.took.Seconds() }
	heldOf := func(c liveComputation) float64 { return float64(c.held) / mib }
	allocOf := func(c liveComputation) float64 { return float64(c.alloc) / mib }
	samples := 2 * n
	line := func(name string, cs []liveComputation) string {
		return fmt.Sprintf("%s %.2f s, peak heap %.0f MiB, peak RSS %.0f MiB, allocated %.0f MiB, held %.0f MiB", name,
			med(cs, secs), med(cs, heapOf), med(cs, rssOf), med(cs, allocOf), med(cs, heldOf))
	}
	b.Logf("%s, %d rows (%d samples), one live computation, medians of %d (of two: means): %s; %s; %s; now/main heap %.2f, RSS %.2f, allocated %.2f, time %.2f; now/before heap %.2f, RSS %.2f",
		d, n, samples, reps, line("before", before), line("main (ratings kept)", kept), line("now", after),
		med(after, heapOf)/med(kept, heapOf), med(after, rssOf)/med(kept, rssOf), med(after, allocOf)/med(kept, allocOf), med(after, secs)/med(kept, secs),
		med(after, heapOf)/med(before, heapOf), med(after, rssOf)/med(before, rssOf))
	for _, r := range []struct {
		name string
		base []liveComputation
	}{{"main", kept}, {"before", before}} {
		b.ReportMetric(med(after, heapOf)/med(r.base, heapOf), fmt.Sprintf("%s-%dk-heap/%s", d, samples/1000, r.name))
		b.ReportMetric(med(after, rssOf)/med(r.base, rssOf), fmt.Sprintf("%s-%dk-rss/%s", d, samples/1000, r.name))
		b.ReportMetric(med(after, allocOf)/med(r.base, allocOf), fmt.Sprintf("%s-%dk-alloc/%s", d, samples/1000, r.name))
		b.ReportMetric(med(after, secs)/med(r.base, secs), fmt.Sprintf("%s-%dk-time/%s", d, samples/1000, r.name))
	}
}

// buildFiguresKeepingRatings is BuildFigures keeping the rows' ratings
// maps through the computation, as main's code before livemem46 did: the
// benchmark's in-process measure of what dropping them saves.
func buildFiguresKeepingRatings(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
	opt.figuresOnly, opt.ownRows = true, false
	return buildWith(ctx, db, wsID, runID, opt)
}

// procStatusBytes reads one "Name: N kB" line of /proc/self/status, in
// bytes; 0 where there is none (not Linux).
func procStatusBytes(name string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
