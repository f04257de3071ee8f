package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// BenchmarkPagesOnAFreshPostgres: on a fresh PostgreSQL database (never
// analyzed), a CSV of BATCHEVAL_BENCH_ROWS rows (20,000 by default;
// 1000000 is the issue's) is uploaded and imported through the forms, and
// a BatchEval run (1 criterion, 2 rounds, batches of 10) is launched on
// it against the simulated judge answering after 50 ms (so the run is
// still under way and the worker mostly waits). The pages a user opens
// then (the dataset's first and second pages, the run's
// calls, the project, the run page, the review queue) are timed through e.ServeHTTP, first as served (the median of
// three after a first view, which is timed on its own), then after an
// ANALYZE of the whole database (what autovacuum does within a minute or
// so) in the same process: the ratio is what missing statistics cost.
// Each page's tables' last analyze is logged. PostgreSQL only (with
// TEST_DATABASE_URL); run with -benchtime=1x:
//
//	./scripts/with-postgres.sh go test ./handlers -run '^$' -bench PagesOnAFreshPostgres -benchtime=1x -v
//	BATCHEVAL_BENCH_ROWS=1000000 ./scripts/with-postgres.sh go test ./handlers -run '^$' -bench PagesOnAFreshPostgres -benchtime=1x -timeout 0 -v
func BenchmarkPagesOnAFreshPostgres(b *testing.B) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("PostgreSQL only: run through ./scripts/with-postgres.sh")
	}
	rows := defaultMillionRows
	if v := os.Getenv(millionRowsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			b.Fatalf("%s=%q: want a number of rows of at least 10", millionRowsEnv, v)
		}
		rows = n
	}
	path, _ := writeRatedCSV(b, b.TempDir(), rows)
	for b.Loop() {
		freshPostgresPages(b, path, rows)
	}
}

func freshPostgresPages(b *testing.B, path string, rows int) {
	ctx := context.Background()
	db := dbtest.Open(b, models.Postgres)
	if err := runner.Migrate(ctx, db, nil); err != nil {
		b.Fatal(err)
	}
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "fresh"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	sim, err := simjudge.Start(simjudge.Options{Seed: 7, Latency: 50 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	// Errors only, to stderr: a failed request says why.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	r, err := runner.New(runner.Config{DB: db, Log: log, Work: true, SimulatedURL: sim.URL, PollInterval: 100 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	}()
	h, err := New(db, r, log, ws)
	if err != nil {
		b.Fatal(err)
	}
	h.SimulatedURL = sim.URL
	h.LocalMode = true
	h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
	h.MaxUploadBytes = 1 << 30
	h.MaxUploadRows = max(rows, 1000000)
	h.UploadQuotaBytes = 0
	e := echo.New()
	h.Register(e)
	get := func(target string) (time.Duration, int) {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		rec := httptest.NewRecorder()
		start := time.Now()
		e.ServeHTTP(rec, req)
		return time.Since(start), rec.Code
	}

	body, ctype := multipartFileBody(b, path)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", p.ID), body)
	req.Header.Set(echo.HeaderContentType, ctype)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("upload = %d: %.300s", rec.Code, rec.Body)
	}
	loc, _ := url.Parse(rec.Header().Get("Location"))
	form := url.Values{"token": {loc.Query().Get("token")}, "name": {"fresh"}, "id_column": {"id"},
		"show_1": {"1"}, "label_1": {"Response"}, "rating_2": {"1"}}
	req = httptest.NewRequest(http.MethodPost, loc.Path, strings.NewReader(form.Encode()))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	rec = httptest.NewRecorder()
	start := time.Now()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("import = %d: %.300s", rec.Code, rec.Body)
	}
	imported := time.Since(start)
	dsID, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/datasets/"), 10, 64)
	if err != nil {
		b.Fatalf("import went to %q", rec.Header().Get("Location"))
	}

	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = 2, 10
	rub := evaluator.Rubric{Task: "a response to a request", Fields: []evaluator.Field{{Column: "response", Label: "Response"}},
		Criteria: []evaluator.Criterion{{Name: "Quality", Description: "How good the response is.", Lo: 1, Hi: 5, HumanColumn: "quality"}}}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: dsID, Name: "fresh", Method: models.MethodBatchEval,
		Settings: s, RubricSnapshot: rub, Simulated: true,
		JudgeSnapshot: models.JudgeSnapshot{Name: "Simulated judge", Simulated: true, Model: "simulated", MaxConcurrency: 4, TimeoutSeconds: 60}}
	start = time.Now()
	if err := r.Launch(ctx, &run); err != nil {
		b.Fatal(err)
	}
	// Wait for the first round to be stored (the batches of a round are
	// inserted when it starts) and a few answers.
	for {
		got, err := db.GetRun(ctx, run.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.BatchesDone >= 20 {
			break
		}
		if got.Finished() || time.Since(start) > 10*time.Minute {
			b.Fatalf("run %s with %d batches done after %s", got.Status, got.BatchesDone, time.Since(start).Round(time.Second))
		}
		time.Sleep(50 * time.Millisecond)
	}
	launched := time.Since(start)

	// The run's own page and the review queue of a run under way build
	// its report on every view (report.BuildFigures: no text read but the
	// shown samples').
	pages := []string{
		fmt.Sprintf("/datasets/%d", dsID),
		fmt.Sprintf("/datasets/%d?page=2", dsID),
		fmt.Sprintf("/runs/%d/batches", run.ID),
		fmt.Sprintf("/projects/%d", p.ID),
		fmt.Sprintf("/runs/%d", run.ID),
		fmt.Sprintf("/datasets/%d/review", dsID),
	}
	stats := func() string {
		var out []string
		q := `SELECT relname || ' ' || COALESCE(to_char(GREATEST(last_analyze, last_autoanalyze), 'HH24:MI:SS'), 'never') FROM pg_stat_user_tables
			WHERE relname IN ('dataset_rows', 'runs', 'run_batches', 'run_scores', 'run_results', 'review_ratings') ORDER BY relname`
		if err := db.Gorm.Raw(q).Scan(&out).Error; err != nil {
			b.Fatal(err)
		}
		return strings.Join(out, ", ")
	}
	measure := func() (first, median []time.Duration) {
		for _, pg := range pages {
			took, code := get(pg)
			if code != http.StatusOK {
				b.Fatalf("GET %s = %d", pg, code)
			}
			var again []time.Duration
			for range 3 {
				t, _ := get(pg)
				again = append(again, t)
			}
			slices.Sort(again)
			first, median = append(first, took), append(median, again[1])
		}
		return first, median
	}
	b.Logf("%d rows: imported in %s, run launched and 20 batches answered in %s; analyzed: %s", rows, imported.Round(time.Millisecond), launched.Round(time.Millisecond), stats())
	first, served := measure()
	if _, err := db.SQL.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	firstA, analyzed := measure()
	for i, pg := range pages {
		b.Logf("%-22s first %8.1f ms, then %8.1f ms; after ANALYZE first %8.1f ms, then %8.1f ms; ratio %.2fx",
			pg, ms(first[i]), ms(served[i]), ms(firstA[i]), ms(analyzed[i]), float64(served[i])/float64(analyzed[i]))
		b.ReportMetric(ms(served[i]), "ms-"+strings.ReplaceAll(strings.Trim(pg, "/"), "/", "-"))
	}
}
