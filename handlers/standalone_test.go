package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// oldStandalone is the standalone report as sendStandalone wrote it before
// it was streamed, kept as the reference: the report built whole
// (buildReport), every score of the run read in one query, the page
// rendered in memory by web.StandaloneRunReport.
func oldStandalone(t testing.TB, h *Handlers, ctx context.Context, run models.Run, generated time.Time) []byte {
	t.Helper()
	facts, err := h.reportFacts(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	v := web.StandaloneRunView{ReportFacts: facts, Generated: generated}
	if run.BatchesDone > 0 {
		if v.Report, err = h.buildReport(ctx, run.ID, ""); err != nil {
			t.Fatal(err)
		}
		if v.Samples, err = oldStandaloneSamples(ctx, h, run, v.Report); err != nil {
			t.Fatal(err)
		}
		// Why final scores are missing, as the stream says it.
		sayWhyStandaloneFinalMissing(run, v.Samples, builtMissing(v.Report))
		// Why human ratings are missing, as the stream says it.
		if err := h.standaloneHumanReasons(run, v.Report.Criteria)(ctx, v.Samples); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := web.StandaloneRunReport(v).Render(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// oldStandaloneSamples is the former standaloneSamples: every sample with
// each criterion's rounds and analyses, from every score of the run.
func oldStandaloneSamples(ctx context.Context, h *Handlers, run models.Run, rep *report.Report) ([]web.StandaloneSample, error) {
	scores, err := h.DB.ListScores(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	type key struct {
		row int64
		ci  int
	}
	rounds := map[key][]web.RunSampleRound{}
	for _, s := range scores {
		k := key{s.RowID, s.CriterionIndex}
		rounds[k] = append(rounds[k], web.RunSampleRound{Round: s.Round + 1, Score: s.Score, Analysis: s.Analysis, Label: s.Label})
	}
	var out []web.StandaloneSample
	index := map[int64]int{}
	for ci, c := range rep.Criteria {
		for _, s := range c.Samples {
			k, ok := index[s.RowID]
			if !ok {
				k = len(out)
				index[s.RowID] = k
				out = append(out, web.StandaloneSample{RowID: s.RowID, ExternalID: s.ExternalID, Fields: s.Fields})
			}
			rs := rounds[key{s.RowID, ci}]
			sortRounds(rs)
			out[k].Criteria = append(out[k].Criteria, web.RunSampleCriterion{Name: c.Criterion.Name,
				Range: fmt.Sprintf("%g to %g", c.Criterion.Lo, c.Criterion.Hi), Human: s.Human, Final: s.Final, Rounds: rs})
		}
	}
	return out, nil
}

// newStandalone renders standalonePage into memory.
func newStandalone(t *testing.T, h *Handlers, ctx context.Context, run models.Run, generated time.Time) []byte {
	t.Helper()
	page, err := h.standalonePage(ctx, run, generated)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := page.Render(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstDiff describes where two outputs part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-150)
	return fmt.Sprintf("at byte %d of %d/%d:\nold …%s\nnew …%s", i, len(a), len(b), a[lo:min(len(a), i+150)], b[lo:min(len(b), i+150)])
}

// TestStandaloneStreamedIsTheOldReport: the streamed standalone report
// (figures from the stored summary, samples read a chunk of rows at a
// time) is byte for byte the report the old path built whole: a finished
// demo run of two criteria with human ratings and analyses, the same with
// unreadable scores, a synthesized run with analyses on some rounds only,
// a run still going (built afresh), a run with no answer yet; at chunk
// sizes that cut the dataset in many chunks, one chunk, and one row each.
func TestStandaloneStreamedIsTheOldReport(t *testing.T) {
	serialTest(t) // sets standaloneChunkRows
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		generated := time.Date(2026, 12, 2, 4, 30, 0, 0, time.UTC)
		setRun := func(id int64, cols map[string]any) {
			t.Helper()
			if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", id).Updates(cols).Error; err != nil {
				t.Fatal(err)
			}
			env.h.forgetReports(id)
		}

		demoRun := env.waitRun(env.launch(env.demo().launchForm("2", "10")), 60*time.Second)
		missingRun := env.waitRun(env.launch(env.demo().launchForm("2", "10")), 60*time.Second)
		// Unreadable answers: no score, the analysis kept. A later
		// finishing time makes the stored summary out of date, as a
		// resumed run's is.
		if err := env.db.Gorm.Exec("UPDATE run_scores SET score = NULL WHERE run_id = ? AND (row_id % 4 = 1 OR (criterion_index = 1 AND round = 0 AND row_id % 3 = 0))",
			missingRun.ID).Error; err != nil {
			t.Fatal(err)
		}
		setRun(missingRun.ID, map[string]any{"finished_at": missingRun.FinishedAt.Add(time.Second)})

		ds, ids := synthDataset(t, env.db, env.project, 53)
		synthID := synthRunOn(t, env.db, env.project, ds, ids, 0)
		// Analyses on the first round only, one with markup in it.
		if err := env.db.Gorm.Exec("UPDATE run_scores SET analysis = 'Reads <well> & ' || CAST(row_id AS TEXT) WHERE run_id = ? AND round = 0", synthID).Error; err != nil {
			t.Fatal(err)
		}
		goingID := synthRunOn(t, env.db, env.project, ds, ids, 2)
		setRun(goingID, map[string]any{"status": models.RunRunning, "finished_at": nil})
		emptyID := synthRunOn(t, env.db, env.project, ds, ids, 3)
		setRun(emptyID, map[string]any{"status": models.RunQueued, "finished_at": nil, "batches_done": 0})

		defer func(n int) { standaloneChunkRows = n }(standaloneChunkRows)
		for _, tc := range []struct {
			name  string
			id    int64
			parts []string // what the report must show
		}{
			{"demo run", demoRun.ID, []string{`data-testid="standalone-sample"`, `data-testid="correlations"`, `<div class="pre">`}},
			{"unreadable scores", missingRun.ID, []string{`data-testid="standalone-sample"`, "<strong>Round 1: —</strong>", ": judge —, human "}},
			{"synthesized, analyses on round 1", synthID, []string{"Reads &lt;well&gt; &amp; ", "No analysis.", "Coherence: human", "Fluency: judge"}},
			{"still going", goingID, []string{"This run is still going", `data-testid="standalone-sample"`}},
			{"no answer yet", emptyID, []string{"No scores yet."}},
		} {
			run, err := env.db.GetRun(context.Background(), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{7, 1000, 1} {
				t.Run(fmt.Sprintf("%s/chunk %d", tc.name, chunk), func(t *testing.T) {
					standaloneChunkRows = chunk
					// A run still going says how long it has been going at
					// the moment its report is made, which moves between
					// the two renderings: compare without it.
					want := withoutElapsed(oldStandalone(t, env.h, ctx, run, generated))
					got := withoutElapsed(newStandalone(t, env.h, ctx, run, generated))
					if !bytes.Equal(got, want) {
						t.Fatalf("the streamed report differs from the old one %s", firstDiff(want, got))
					}
					for _, p := range tc.parts {
						if !bytes.Contains(got, []byte(p)) {
							t.Errorf("the report lacks %q", p)
						}
					}
				})
			}
		}

		// Through the app: a download with its name, the same bytes.
		standaloneChunkRows = 7
		rec := env.get(fmt.Sprintf("/runs/%d/report.html", synthID))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentDisposition), "attachment; filename=\"run-") ||
			rec.Header().Get(echo.HeaderContentType) != echo.MIMETextHTMLCharsetUTF8 {
			t.Fatalf("GET report.html: %d %v", rec.Code, rec.Header())
		}
		if n := strings.Count(rec.Body.String(), `data-testid="standalone-sample"`); n != 53 || !strings.HasSuffix(rec.Body.String(), "</html>") {
			t.Errorf("the download has %d samples of 53, ends %q", n, rec.Body.String()[max(0, rec.Body.Len()-20):])
		}
	})
}

// TestStandalonePreparing: the report of a large finished run whose
// summary is being built answers 503 with Retry-After and a plain message
// at once, not a download, and the report once the build is done.
func TestStandalonePreparing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := unstoredFinishedRun(t, env, true)
		hb := holdBuilds(env)
		path := "/runs/" + strconv.FormatInt(run.ID, 10) + "/report.html"
		rec := env.within(t, path)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != strconv.Itoa(preparingRetrySeconds) ||
			rec.Header().Get(echo.HeaderContentDisposition) != "" || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), "text/plain") ||
			!strings.Contains(rec.Body.String(), "being computed") {
			t.Fatalf("while preparing: %d %v %q", rec.Code, rec.Header(), rec.Body.String())
		}
		<-hb.started
		close(hb.release)
		deadline := time.Now().Add(30 * time.Second)
		for {
			rec = env.within(t, path)
			if rec.Code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the build: %d %q", rec.Code, rec.Body.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(rec.Body.String(), `data-testid="standalone-sample"`) {
			t.Errorf("the report after the build lists no sample")
		}
	})
}

// elapsedCell is the report's elapsed time, which depends on the clock.
var elapsedCell = regexp.MustCompile(`data-testid="report-elapsed">[^<]*<`)

// withoutElapsed blanks the report's elapsed time.
func withoutElapsed(page []byte) []byte {
	return elapsedCell.ReplaceAll(page, []byte(`data-testid="report-elapsed"><`))
}
