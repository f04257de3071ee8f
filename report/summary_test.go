package report

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// equalNaN is reflect.DeepEqual with NaN equal to NaN (an undefined
// correlation is stored and served as NaN) and nil slices and maps equal
// to empty ones (a gob round trip drops the difference); path says where
// a and b first differ.
func equalNaN(a, b reflect.Value, path string) (bool, string) {
	if a.Kind() != b.Kind() {
		return false, path + ": kinds differ"
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
			return true, ""
		}
		return false, fmt.Sprintf("%s: %v != %v", path, x, y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() == b.IsNil() {
				return true, ""
			}
			return false, path + ": one is nil"
		}
		return equalNaN(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if ok, where := equalNaN(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); !ok {
				return false, where
			}
		}
		return true, ""
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false, fmt.Sprintf("%s: length %d != %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if ok, where := equalNaN(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); !ok {
				return false, where
			}
		}
		return true, ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return false, fmt.Sprintf("%s: %d keys != %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return false, fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if ok, where := equalNaN(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); !ok {
				return false, where
			}
		}
		return true, ""
	default:
		if a.CanInterface() && b.CanInterface() {
			if reflect.DeepEqual(a.Interface(), b.Interface()) {
				return true, ""
			}
			return false, fmt.Sprintf("%s: %v != %v", path, a.Interface(), b.Interface())
		}
		return true, ""
	}
}

func assertSameValue(t *testing.T, what string, got, want any) {
	t.Helper()
	if ok, where := equalNaN(reflect.ValueOf(got), reflect.ValueOf(want), what); !ok {
		t.Errorf("stored differs from a full build at %s", where)
	}
}

// summaryFixture is a finished synthesized run of n samples, with the
// second criterion's human column removed (a criterion without human
// ratings) and every seventh sample's rating of the first removed (pairs
// with a missing human rating); every 50th score is unreadable.
func summaryFixture(t *testing.T, db *models.DB, n int) (wsID, runID int64) {
	t.Helper()
	ctx := context.Background()
	wsID, runID = synthRun(t, db, n)
	run, err := db.FindRun(ctx, wsID, runID)
	must(t, err)
	run.RubricSnapshot.Criteria[1].HumanColumn = ""
	must(t, db.Gorm.Model(&run).Select("RubricSnapshot").Updates(&run).Error)
	rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
	must(t, err)
	for _, r := range rows {
		if r.Position%7 == 0 {
			delete(r.Ratings, "coherence")
			must(t, db.Gorm.Model(&r).Select("Ratings").Updates(&r).Error)
		}
	}
	return wsID, runID
}

// assertSummaryMatches checks LoadSummary's figures against a full build
// and LoadSamplePage's pages, for every order and filter, against the full
// build's samples sorted by SortSamples.
func assertSummaryMatches(t *testing.T, db *models.DB, wsID, runID int64, opt Options) {
	t.Helper()
	ctx := context.Background()
	full, err := BuildWith(ctx, db, wsID, runID, opt)
	must(t, err)
	sum, err := LoadSummary(ctx, db, wsID, runID, opt)
	must(t, err)
	if len(sum.Criteria) != len(full.Criteria) {
		t.Fatalf("%d criteria, want %d", len(sum.Criteria), len(full.Criteria))
	}
	assertSameValue(t, "Humans", sum.Humans, full.Humans)
	assertSameValue(t, "Run.RubricSnapshot", sum.Run.RubricSnapshot, full.Run.RubricSnapshot)
	assertSameValue(t, "Dataset.GroupColumn", sum.Dataset.GroupColumn, full.Dataset.GroupColumn)
	for ci := range full.Criteria {
		want := full.Criteria[ci]
		samples := want.Samples
		want.Samples = nil
		if sum.Criteria[ci].Samples != nil {
			t.Errorf("criterion %d: a summary with samples", ci)
		}
		assertSameValue(t, fmt.Sprintf("Criteria[%d]", ci), sum.Criteria[ci], want)
		for _, key := range sampleSorts {
			for _, dir := range []string{"asc", "desc"} {
				for _, only := range []bool{false, true} {
					var kept []SampleResult
					for _, s := range samples {
						if !only || s.Missing > 0 {
							kept = append(kept, s)
						}
					}
					SortSamples(kept, key, dir == "desc")
					// A search: streamed text, stored order.
					needle := "dialogue 1"
					var found []SampleResult
					for _, s := range kept {
						if SampleContains(s, needle) {
							found = append(found, s)
						}
					}
					ids, err := SearchSamples(ctx, db, sum, SamplePage{Criterion: ci, Sort: key, Dir: dir, OnlyMissing: only}, "Dialogue 1")
					must(t, err)
					if len(ids) != len(found) || len(found) == 0 {
						t.Errorf("criterion %d %s %s only=%v: search found %d, want %d (and some)", ci, key, dir, only, len(ids), len(found))
					} else {
						last := max(0, len(found)-50)
						got, err := LoadSampleRows(ctx, db, sum, ci, ids[last:])
						must(t, err)
						assertSameValue(t, fmt.Sprintf("search, criterion %d sort %s %s only=%v, last page", ci, key, dir, only), got, found[last:])
					}
					const per = 50
					pages := max(1, (len(kept)+per-1)/per)
					for _, page := range []int{1, 2, pages} {
						from := min((page-1)*per, len(kept))
						wantRows := kept[from:min(from+per, len(kept))]
						got, matching, err := LoadSamplePage(ctx, db, sum, SamplePage{Criterion: ci, Sort: key, Dir: dir, OnlyMissing: only, Page: page, PerPage: per})
						must(t, err)
						if matching != len(kept) {
							t.Errorf("criterion %d %s %s only=%v: %d matching, want %d", ci, key, dir, only, matching, len(kept))
						}
						if len(wantRows) == 0 {
							wantRows = nil
						}
						assertSameValue(t, fmt.Sprintf("criterion %d sort %s %s only=%v page %d", ci, key, dir, only, page), got, wantRows)
					}
				}
			}
		}
	}
}

// TestSummaryAndPagesMatchFullBuild: a finished run's stored summary has
// every figure of a full build, and each page of its stored samples, in
// every order, with and without the filter, is the full build's page; with
// missing scores, a criterion without human ratings, samples without one,
// under another grouping and system column, and after the human source
// changes (the stored form is then computed again, never served stale).
func TestSummaryAndPagesMatchFullBuild(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 2400)
		assertSummaryMatches(t, db, wsID, runID, Options{})
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		if d := sum.Criteria[0].Scatter; d == nil || len(d.Drawn) != MaxScatterPoints || d.Grid == nil || sum.Criteria[1].Scatter != nil {
			t.Fatalf("the fixture does not exercise the scatter's sample and grid")
		}
		if sum.Criteria[0].MissingSamples == 0 || !sum.Criteria[0].HasHuman || sum.Criteria[1].HasHuman {
			t.Fatalf("the fixture has no missing scores or no criterion without human ratings")
		}
		assertSummaryMatches(t, db, wsID, runID, Options{GroupColumn: "system", SystemColumn: NoSystem})

		// Browser ratings chosen as the human source: stored again.
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 40)
		must(t, err)
		for i, r := range rows {
			v := float64(1 + i%5)
			if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
				Criterion: "Coherence", HumanColumn: "coherence", Reviewer: "ann", Score: &v, Lo: 1, Hi: 5}); err != nil {
				t.Fatal(err)
			}
		}
		before, _, err := db.FindRunSampleSet(ctx, runID)
		must(t, err)
		if _, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBoth, "tester"); err != nil {
			t.Fatal(err)
		}
		assertSummaryMatches(t, db, wsID, runID, Options{})
		after, _, err := db.FindRunSampleSet(ctx, runID)
		must(t, err)
		if after.InputKey == before.InputKey {
			t.Errorf("the human source changed and the stored samples kept their key")
		}
		sum, err = LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		if sum.Humans.Source != models.HumansBoth || sum.Humans.BrowserRatings != len(rows) {
			t.Errorf("summary after the recompute uses %+v, want both sources with %d browser ratings", sum.Humans, len(rows))
		}
	})
}

// TestSummaryRebuiltWhenMissingOrStale: a run finished before summaries
// existed (nothing stored), a summary of other inputs and one that cannot
// be read are each computed again and stored; a current one is served as
// stored, without a build.
func TestSummaryRebuiltWhenMissingOrStale(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 300)
		stored := func() models.RunSummary {
			row, found, err := db.FindRunSummary(ctx, runID, summaryVariant(Options{}))
			must(t, err)
			if !found {
				t.Fatalf("no summary stored")
			}
			return row
		}
		if _, found, _ := db.FindRunSummary(ctx, runID, summaryVariant(Options{})); found {
			t.Fatalf("a summary before any read")
		}
		must(t, StoreStats(ctx, db, wsID, runID))
		good := stored()

		// Served as stored: a marker put into the stored figures comes back.
		s, err := decodeSummary(good.Summary)
		must(t, err)
		s.Criteria[0].Reading = "served from storage"
		enc, err := encodeSummary(s)
		must(t, err)
		must(t, db.Gorm.Model(&models.RunSummary{}).Where("run_id = ?", runID).Update("summary", enc).Error)
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		if sum.Criteria[0].Reading != "served from storage" {
			t.Fatalf("a current summary was not served from storage")
		}

		for _, tc := range []struct {
			name   string
			update map[string]any
		}{
			{"other inputs", map[string]any{"input_key": "computed from other inputs"}},
			{"unreadable", map[string]any{"input_key": good.InputKey, "summary": "not a summary"}},
		} {
			// The marker stays in the row: a stale row must not be served.
			must(t, db.Gorm.Model(&models.RunSummary{}).Where("run_id = ?", runID).Updates(tc.update).Error)
			sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
			must(t, err)
			if sum.Criteria[0].Reading == "served from storage" {
				t.Errorf("%s: the stale summary was served", tc.name)
			}
			if row := stored(); row.InputKey != good.InputKey || row.Summary == "not a summary" {
				t.Errorf("%s: not stored again", tc.name)
			}
			assertSummaryMatches(t, db, wsID, runID, Options{})
		}

		// A resumed run (it finishes again) makes its stored form stale.
		must(t, db.Gorm.Model(&models.Run{}).Where("id = ?", runID).Update("batches_failed", 1).Error)
		set, _, err := db.FindRunSampleSet(ctx, runID)
		must(t, err)
		must(t, db.Gorm.Model(&models.RunSampleResult{}).Where("run_id = ?", runID).Update("missing", 99).Error)
		assertSummaryMatches(t, db, wsID, runID, Options{})
		if after, _, _ := db.FindRunSampleSet(ctx, runID); after.InputKey == set.InputKey {
			t.Errorf("the samples of a changed run were not stored again")
		}
	})
}

// TestSummaryPageReadsOnlyItsRows: once stored, a run's summary and a
// page of its samples are read without the run's scores or batches (they
// are deleted here) and without the text of any other sample (made
// unreadable here): a read of every row or score would fail or differ.
func TestSummaryPageReadsOnlyItsRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 500)
		full, err := Build(ctx, db, wsID, runID)
		must(t, err)
		must(t, StoreStats(ctx, db, wsID, runID))
		want := append([]SampleResult(nil), full.Criteria[0].Samples...)
		SortSamples(want, "score", true)
		want = want[50:100]
		keep := make([]int64, len(want))
		for i, s := range want {
			keep[i] = s.RowID
		}
		must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunScore{}).Error)
		must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunBatch{}).Error)
		must(t, db.Gorm.Exec("UPDATE dataset_rows SET data = 'unreadable', ratings = 'unreadable' WHERE dataset_id = ? AND id NOT IN ?", full.Run.DatasetID, keep).Error)
		if _, err := Build(ctx, db, wsID, runID); err == nil {
			t.Fatalf("a full build still works: the test would prove nothing")
		}
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		got, _, err := LoadSamplePage(ctx, db, sum, SamplePage{Criterion: 0, Sort: "score", Dir: "desc", Page: 2, PerPage: 50})
		must(t, err)
		assertSameValue(t, "page 2 by score", got, want)
		wantC := full.Criteria[0]
		wantC.Samples = nil
		assertSameValue(t, "Criteria[0]", sum.Criteria[0], wantC)
	})
}

// TestSummaryStoredByTwoReadersAtOnce: two first reads of a run finished
// before summaries existed may store it at the same time; neither fails on
// the other's rows (on PostgreSQL the second would collide with the
// first's uncommitted rows without the run's row lock), and the stored form
// is then served.
func TestSummaryStoredByTwoReadersAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 2000)
		full, err := Build(ctx, db, wsID, runID)
		must(t, err)
		rows := sampleRows(runID, full)
		for round := range 3 {
			errs := make(chan error, 2)
			start := make(chan struct{})
			for range 2 {
				go func() {
					<-start
					errs <- db.SaveRunSummary(ctx, models.RunSummary{RunID: runID, Variant: "race", InputKey: "k", Summary: "-"},
						fmt.Sprintf("key %d", round), 2000, rows)
				}()
			}
			close(start)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("round %d: a concurrent store failed: %v", round, err)
				}
			}
		}
		var n int64
		must(t, db.Gorm.Model(&models.RunSampleResult{}).Where("run_id = ?", runID).Count(&n).Error)
		if n != int64(len(rows)) {
			t.Errorf("%d sample results stored, want %d", n, len(rows))
		}
		assertSummaryMatches(t, db, wsID, runID, Options{})
	})
}

// TestLookupSummaryBuildsNothing: before a finished run's summary is
// stored, LookupSummary finds none and says what a build would read and
// which computation it is (a key per variant); after LoadSummary stored it,
// the lookup returns it under the same key. Another variant is another
// key, still unstored.
func TestLookupSummaryBuildsNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 40)
		run, err := db.FindRun(ctx, wsID, runID)
		if err != nil {
			t.Fatal(err)
		}
		before, err := LookupSummary(ctx, db, wsID, runID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if before.Stored != nil || before.InputKey == "" || before.Samples != 40*len(run.RubricSnapshot.Criteria) {
			t.Fatalf("before any build: stored %v, key %q, samples %d (want nil, a key, %d)", before.Stored != nil, before.InputKey,
				before.Samples, 40*len(run.RubricSnapshot.Criteria))
		}
		if _, found, err := db.FindRunSummary(ctx, runID, summaryVariant(Options{})); err != nil || found {
			t.Fatalf("the lookup stored a summary (%v)", err)
		}
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		after, err := LookupSummary(ctx, db, wsID, runID, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if after.Stored == nil || after.InputKey != before.InputKey {
			t.Fatalf("after LoadSummary: stored %v, key changed %v", after.Stored != nil, after.InputKey != before.InputKey)
		}
		assertSameValue(t, "looked-up summary", after.Stored.Criteria, sum.Criteria)
		other, err := LookupSummary(ctx, db, wsID, runID, Options{SystemColumn: NoSystem})
		if err != nil {
			t.Fatal(err)
		}
		if other.Stored != nil || other.InputKey == before.InputKey {
			t.Errorf("another variant: stored %v, same key %v", other.Stored != nil, other.InputKey == before.InputKey)
		}
	})
}

// TestSummaryStoreLeavesPageCacheAsFound: storing a large run's sample
// results enlarges SQLite's page cache for its transaction only; every
// connection of the pool has its usual cache afterwards (a pool of 64 MiB
// caches would hold memory long after the run).
func TestSummaryStoreLeavesPageCacheAsFound(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, models.SQLite)
	wsID, runID := summaryFixture(t, db, 2000)
	cacheSizes := func() []int64 {
		// Holding the pool's every connection at once reads each of them.
		var sizes []int64
		var conns []*sql.Conn
		for range 4 {
			c, err := db.SQL.Conn(ctx)
			must(t, err)
			conns = append(conns, c)
			var n int64
			must(t, c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n))
			sizes = append(sizes, n)
		}
		for _, c := range conns {
			c.Close()
		}
		return sizes
	}
	before := cacheSizes()
	must(t, StoreStats(ctx, db, wsID, runID))
	var stored int64
	must(t, db.Gorm.Model(&models.RunSampleResult{}).Where("run_id = ?", runID).Count(&stored).Error)
	if stored <= 100 {
		t.Fatalf("%d sample results stored: too few to take the large-run path", stored)
	}
	if after := cacheSizes(); !slices.Equal(before, after) {
		t.Errorf("page cache sizes %v after storing, %v before", after, before)
	}
}
