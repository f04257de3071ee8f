package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// TestLiveFiguresAboveTheOldBound: a running run of more samples than
// liveReportSamples (20,000, the run page's bound before livebig44)
// showed no provisional figures at all, only "Results appear when the run
// finishes". Now its page shows them, labelled over the samples scored,
// equal to a recomputation over those samples, with its samples table
// paged from the kept orders as for a small run; a run above
// liveFiguresMaxSamples (here a test's bound) still defers them.
func TestLiveFiguresAboveTheOldBound(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := liveReportSamples/2 + 1 // two criteria: 20,002 samples
		ds, ids := synthDataset(t, env.db, env.project, rows)
		id := synthRunOn(t, env.db, env.project, ds, ids, 0)
		// Put back to running with part of its answers still to come: the
		// second round of a third of the rows, and every round of some.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, batches_done = batches_done - 7 WHERE id = ?`, models.RunRunning, id).Error)
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND (round = 1 AND row_id % 3 = 0 OR row_id % 17 = 0)`, id).Error)
		run, err := env.db.GetRun(ctx, id)
		must(t, err)
		if n := liveSamples(run, ds.RowCount); n <= liveReportSamples {
			t.Fatalf("the run has %d samples, not above the old bound %d: the test proves nothing", n, liveReportSamples)
		}

		page := fmt.Sprintf("/runs/%d", id)
		rec := env.get(page)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="provisional"`) || strings.Contains(body, `data-testid="results-at-end"`) {
			t.Fatalf("%s, %d samples running: %d, want provisional figures, not results at the end: %.300s", page, liveSamples(run, ds.RowCount), rec.Code, body)
		}
		settleLive(t, env.h)
		fresh, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, id, report.Options{})
		must(t, err)
		lv, stale, err := env.h.liveFiguresFor(env.localCtx(), run, report.Options{})
		must(t, err)
		if stale || !equalNaN(reflect.ValueOf(fresh.Criteria), reflect.ValueOf(lv.rep.Criteria)) {
			t.Fatalf("the figures shown (stale %v) differ from a recomputation over the same samples", stale)
		}
		want := scoredCounts(fresh)
		for i, c := range fresh.Criteria {
			if want[i] == 0 || want[i] == len(c.Samples) {
				t.Fatalf("%s: %d of %d samples scored: not a partial run", c.Criterion.Name, want[i], len(c.Samples))
			}
			label := fmt.Sprintf("%s: %s of %s samples scored", c.Criterion.Name, web.Count(want[i]), web.Count(len(c.Samples)))
			if !strings.Contains(body, label) {
				at := max(0, strings.Index(body, "Provisional"))
				t.Errorf("the page's label: want %q: %.400s", label, body[at:])
			}
			// Above stats.AnalyticAbove pairs the intervals are Fisher's
			// z, and the page says so.
			if lbl := c.IntervalLabel(); lbl == "" || !strings.Contains(body, lbl) {
				t.Errorf("%s: the page does not say how its intervals were computed (%q)", c.Criterion.Name, lbl)
			}
		}

		// The samples table pages the kept orders: each page as the table
		// of the recomputed figures sorted afresh.
		for _, q := range []string{"", "sort=score&dir=desc&page=3", "sort=diff&dir=desc&only=missing&page=2", "criterion=1&sort=human&page=200"} {
			vals, err := url.ParseQuery(q)
			must(t, err)
			req := httptest.NewRequest(http.MethodGet, page+"?"+q, nil).WithContext(env.localCtx())
			c := env.e.NewContext(req, httptest.NewRecorder())
			v := web.RunView{Run: run, Columns: ds.Columns, Group: ds.GroupColumn, DefaultGroup: ds.GroupColumn}
			must(t, env.h.runResults(c, run, &v, false))
			wantTable := sampleTable(fresh, vals)
			if len(v.Table.Rows) == 0 || len(v.Table.Rows) != len(wantTable.Rows) || v.Table.Page != wantTable.Page || v.Table.Pages != wantTable.Pages {
				t.Fatalf("?%s: %d rows, page %d of %d; want %d rows, page %d of %d", q, len(v.Table.Rows), v.Table.Page, v.Table.Pages,
					len(wantTable.Rows), wantTable.Page, wantTable.Pages)
			}
			for i, r := range v.Table.Rows {
				if r.RowID != wantTable.Rows[i].RowID || len(r.Fields) == 0 {
					t.Fatalf("?%s: row %d is sample %d (%d fields), want %d with its texts", q, i, r.RowID, len(r.Fields), wantTable.Rows[i].RowID)
				}
			}
		}

		// Above the bound that protects memory, the figures still wait for
		// the end.
		env.h.liveMaxSamples = liveSamples(run, ds.RowCount) - 1
		if body := env.get(page).Body.String(); !strings.Contains(body, `data-testid="results-at-end"`) || strings.Contains(body, `data-testid="provisional"`) {
			t.Errorf("a running run above liveFiguresMaxSamples shows figures")
		}
	})
}
