package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// The pages of a run under way (its own page and the review queue on it)
// build its report on every view. They read every row of its dataset
// whole, texts and all (report.Build → ListDatasetRows), to show 50
// samples, or one: seconds at 20,000 rows, and growing with the dataset.
// They now read of the rows what the figures need (no text; the group and
// system columns taken out of the JSON by the database) and the texts of
// the samples shown by key. Every figure and every shown sample must stay
// as the whole report gave them (full, the old path, in the same test),
// and no statement of those pages may read dataset_rows' text except by
// key, for at most one page of samples.
func TestLivePagesReadTheShownRowsOnly(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		id := env.launch(d.launchForm("2", "5"))
		env.waitRun(id, 60*time.Second)
		// Under way: part of the second round not answered yet.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND round = 1 AND row_id % 3 = 0`, id).Error)
		run, err := env.db.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ds := d.dataset
		// The demo has no system column: its shared context stands for
		// one (?system=), and for a group (?group=).
		const shared = "context"
		if !slices.Contains(ds.Columns, shared) {
			t.Fatalf("demo dataset columns %v: want %q", ds.Columns, shared)
		}

		var mu sync.Mutex
		var taken []string
		recording := false
		const hook = "test:live_pages_rows"
		take := func(tx *gorm.DB) {
			sql := tx.Statement.SQL.String()
			if tx.Statement.Table != "dataset_rows" && !strings.Contains(sql, "dataset_rows") {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if recording {
				taken = append(taken, fmt.Sprintf("%s [%d args]", sql, len(tx.Statement.Vars)))
			}
		}
		must(t, env.db.Gorm.Callback().Query().After("gorm:query").Register(hook, take))
		must(t, env.db.Gorm.Callback().Row().After("gorm:row").Register(hook, take))
		t.Cleanup(func() {
			_ = env.db.Gorm.Callback().Query().Remove(hook)
			_ = env.db.Gorm.Callback().Row().Remove(hook)
		})
		record := func(on bool) []string {
			mu.Lock()
			defer mu.Unlock()
			recording = on
			got := taken
			taken = nil
			return got
		}
		// A statement reads texts when it selects every column or names
		// data other than to take one column out of it.
		extract := regexp.MustCompile(`data(::jsonb)? ->> `)
		texts := regexp.MustCompile(`(?i)SELECT \*|\bdata\b`)
		byKey := regexp.MustCompile(`(?i)WHERE "?id"? IN \(`)
		args := regexp.MustCompile(`\[(\d+) args\]$`)
		checkStatements := func(page string, stmts []string) {
			t.Helper()
			if len(stmts) == 0 {
				t.Errorf("%s: no statement on dataset_rows seen", page)
			}
			for _, s := range stmts {
				if !texts.MatchString(extract.ReplaceAllString(s, "")) {
					continue
				}
				n, _ := strconv.Atoi(args.FindStringSubmatch(s)[1])
				if !byKey.MatchString(s) || n > samplesPerPage {
					t.Errorf("%s reads dataset rows' texts other than the shown rows' by key: %s", page, s)
				}
			}
		}

		for _, q := range []string{"", "?sort=score&dir=desc&page=2", "?group=" + shared + "&criterion=1", "?system=" + shared + "&sort=diff&dir=desc"} {
			page := fmt.Sprintf("/runs/%d%s", id, q)
			var views [2]web.RunView
			for k, full := range []bool{true, false} {
				req := httptest.NewRequest(http.MethodGet, page, nil).WithContext(env.localCtx())
				c := env.e.NewContext(req, httptest.NewRecorder())
				v := web.RunView{Run: run}
				v.Columns, v.DefaultGroup, v.DefaultSystem = ds.Columns, ds.GroupColumn, report.DefaultSystemColumn(ds.Columns)
				v.Group = pickGroup(c.QueryParam("group"), ds.Columns, ds.GroupColumn)
				v.SystemQuery = pickSystem(c.QueryParam("system"), ds.Columns)
				record(!full)
				if err := env.h.runResults(c, run, &v, full); err != nil {
					t.Fatalf("%s (full %v): %v", page, full, err)
				}
				if !full {
					checkStatements(page, record(false))
				}
				views[k] = v
			}
			old, got := views[0], views[1]
			if len(got.Table.Rows) == 0 {
				t.Fatalf("%s: no samples shown", page)
			}
			if !equalNaN(reflect.ValueOf(old.Table), reflect.ValueOf(got.Table)) {
				t.Errorf("%s: the samples shown differ from the whole report's:\nold %+v\nnew %+v", page, old.Table, got.Table)
			}
			// Every figure as the whole report computed it (its samples'
			// texts aside, which the new report does not hold).
			want := *old.Report
			want.Criteria = append([]report.CriterionReport(nil), want.Criteria...)
			for i := range want.Criteria {
				ss := append([]report.SampleResult(nil), want.Criteria[i].Samples...)
				for j := range ss {
					ss[j].Fields = nil
				}
				want.Criteria[i].Samples = ss
			}
			if !equalNaN(reflect.ValueOf(want.Criteria), reflect.ValueOf(got.Report.Criteria)) {
				t.Errorf("%s: the live report's figures differ from the whole report's", page)
			}
			if strings.Contains(q, "system=") && got.Report.Criteria[0].System == nil {
				t.Errorf("%s: no system-level figures: the system column was not read", page)
			}
			if strings.Contains(q, "group=") && got.Report.Criteria[0].Grouped == nil {
				t.Errorf("%s: no grouped figures: the group column was not read", page)
			}
		}

		for _, q := range []string{"", "&order=random&i=7", "&order=uncertain&criterion=1", "&i=3&blind=off"} {
			page := fmt.Sprintf("/datasets/%d/review?run=%d%s", ds.ID, id, q)
			var bodies [2]string
			for k, full := range []bool{true, false} {
				req := httptest.NewRequest(http.MethodGet, page, nil).WithContext(env.localCtx())
				rec := httptest.NewRecorder()
				c := env.e.NewContext(req, rec)
				c.SetParamNames("id")
				c.SetParamValues(strconv.FormatInt(ds.ID, 10))
				record(!full)
				if err := env.h.reviewQueue(c, full); err != nil {
					t.Fatalf("%s (full %v): %v", page, full, err)
				}
				if !full {
					checkStatements(page, record(false))
				}
				bodies[k] = rec.Body.String()
			}
			if !strings.Contains(bodies[1], `data-testid="review-sample"`) {
				t.Fatalf("%s: no sample shown: %.400s", page, bodies[1])
			}
			if bodies[0] != bodies[1] {
				t.Errorf("%s: the page differs from the whole report's", page)
			}
		}
	})
}

// equalNaN is reflect.DeepEqual with NaN equal to NaN (a correlation of
// too few pairs is NaN in both reports).
func equalNaN(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalNaN(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalNaN(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalNaN(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			w := b.MapIndex(k)
			if !w.IsValid() || !equalNaN(a.MapIndex(k), w) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	}
	panic("equalNaN: " + a.Kind().String())
}
