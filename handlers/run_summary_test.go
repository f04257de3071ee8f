package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// renderRunResults renders the run page's results for query q, from the
// stored summary and sample page or (full) from a full build.
func renderRunResults(t *testing.T, env *testEnv, run models.Run, q string, full bool) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/runs/"+strconv.FormatInt(run.ID, 10)+"?"+q, nil).WithContext(env.localCtx())
	c := env.e.NewContext(req, httptest.NewRecorder())
	ds, err := env.db.FindDataset(env.localCtx(), env.ws.ID, run.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	v := web.RunView{Run: run, NoAnswer: map[int]int{}}
	v.Columns, v.DefaultGroup = ds.Columns, ds.GroupColumn
	v.Group = pickGroup(c.QueryParam("group"), ds.Columns, ds.GroupColumn)
	v.SystemQuery = pickSystem(c.QueryParam("system"), ds.Columns)
	if err := env.h.runResults(c, run, &v, full); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := web.RunPage(v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestRunPageFromStorageIsTheFullBuildsPage: a finished run's page, read
// from its stored summary and one page of stored samples, is byte for byte
// the page a full build gives, for every sort of the table, the filter,
// each criterion, another grouping and system column, and after the human
// source changes; the page itself then reads no stored score.
func TestRunPageFromStorageIsTheFullBuildsPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		id := env.launch(env.demo().launchForm("2", "10"))
		run := env.waitRun(id, 60*time.Second)
		if run.Status != models.RunSucceeded && run.Status != models.RunFinishedWithGaps {
			t.Fatalf("run %s", run.Status)
		}
		ds, err := env.db.FindDataset(env.localCtx(), env.ws.ID, run.DatasetID)
		if err != nil {
			t.Fatal(err)
		}
		queries := []string{"", "only=missing", "criterion=1&sort=human&dir=desc", "group=" + web.NoGroup, "system=" + web.NoSystem,
			"group=" + url.QueryEscape(ds.Columns[0]), "q=the", "q=THE&sort=score&dir=desc", "q=the&only=missing&criterion=1",
			"q=no+such+text+anywhere", "q=" + url.QueryEscape("<b>")}
		for _, sort := range []string{"position", "score", "human", "diff", "missing"} {
			for _, dir := range []string{"asc", "desc"} {
				queries = append(queries, "sort="+sort+"&dir="+dir)
			}
		}
		check := func(stage string) {
			for _, q := range queries {
				stored, full := renderRunResults(t, env, run, q, false), renderRunResults(t, env, run, q, true)
				if stored != full {
					i := 0
					for i < min(len(stored), len(full)) && stored[i] == full[i] {
						i++
					}
					t.Errorf("%s, ?%s: the stored page differs from the full build's at byte %d:\nstored: %.300s\nfull:   %.300s", stage, q, i, stored[i:], full[i:])
				}
			}
		}
		check("imported ratings")
		if rec := env.postForm("/runs/"+strconv.FormatInt(id, 10)+"/humans", url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		check("after choosing both sources")
		if !strings.Contains(renderRunResults(t, env, run, "", false), "Imported column and browser ratings") &&
			!strings.Contains(renderRunResults(t, env, run, "", false), "both") {
			t.Errorf("the page after the recompute does not say which ratings it used")
		}

		// Stored: the page no longer needs the run's scores.
		if err := env.db.Gorm.Where("run_id = ?", id).Delete(&models.RunScore{}).Error; err != nil {
			t.Fatal(err)
		}
		env.h.forgetReports(id)
		rec := env.get("/runs/" + strconv.FormatInt(id, 10) + "?sort=score&dir=desc")
		if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), `data-testid="sample-row"`) == 0 ||
			!strings.Contains(rec.Body.String(), `data-testid="scatter"`) {
			t.Errorf("run page without stored scores: %d, %d sample rows", rec.Code, strings.Count(rec.Body.String(), `data-testid="sample-row"`))
		}
		if full, err := report.Build(env.localCtx(), env.db, env.ws.ID, id); err != nil || len(full.Criteria) == 0 || full.Criteria[0].Scored != 0 {
			t.Fatalf("the scores are still there: the last check proves nothing (%v)", err)
		}
	})
}

// TestLargeRunningRunPageBuildsNoReport: a running run of more samples
// than liveFiguresMaxSamples shows that its results come at the end and reads
// none of its rows (they are made unreadable here, so a build would
// fail); a small running run still shows its partial results.
func TestLargeRunningRunPageBuildsNoReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		id := env.launch(env.demo().launchForm("1", "10"))
		run := env.waitRun(id, 60*time.Second)
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", id).Updates(map[string]any{"status": models.RunRunning, "finished_at": nil}).Error; err != nil {
			t.Fatal(err)
		}
		page := func() string {
			rec := env.get("/runs/" + strconv.FormatInt(id, 10))
			if rec.Code != http.StatusOK {
				t.Fatalf("run page: %d %.500s", rec.Code, rec.Body.String())
			}
			return rec.Body.String()
		}
		if body := page(); !strings.Contains(body, "Partial results") || strings.Contains(body, `data-testid="results-at-end"`) {
			t.Errorf("a small running run does not show its partial results")
		}
		rows := liveFiguresMaxSamples/len(run.RubricSnapshot.Criteria) + 1
		if err := env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", run.DatasetID).Update("row_count", rows).Error; err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Exec("UPDATE dataset_rows SET data = 'unreadable' WHERE dataset_id = ?", run.DatasetID).Error; err != nil {
			t.Fatal(err)
		}
		body := page()
		if !strings.Contains(body, `data-testid="results-at-end"`) || strings.Contains(body, `data-testid="results"`) {
			t.Errorf("a large running run's page does not defer its results")
		}
		if _, err := report.Build(env.localCtx(), env.db, env.ws.ID, id); err == nil {
			t.Errorf("a build still works with the rows unreadable: the test proves nothing")
		}
	})
}
