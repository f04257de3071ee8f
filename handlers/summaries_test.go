package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// syncBuffer is a log sink safe for the background builds' goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// unstoredFinishedRun is a finished demo run whose summary the runner
// stored and the test then removed (as if its worker died between
// finishing the run and storing it), with its dataset's row count raised
// so that it counts as large when large is set (the build itself still
// reads the few real rows).
func unstoredFinishedRun(t *testing.T, env *testEnv, large bool) models.Run {
	t.Helper()
	id := env.launch(env.demo().launchForm("1", "10"))
	run := env.waitRun(id, 60*time.Second)
	ctx := context.Background()
	// The runner stores the summary just after finishing the run: wait for
	// it, so it cannot land after the removal.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, found, err := env.db.FindRunSummary(ctx, id, "group=&system=")
		if err != nil {
			t.Fatal(err)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runner stored no summary of run %d", id)
		}
	}
	// And until the runner no longer reports it as storing them (just
	// after), or a reader would wait for it instead of building.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	env.runner.WaitStats(wctx)
	cancel()
	if err := env.db.Gorm.Where("run_id = ?", id).Delete(&models.RunSummary{}).Error; err != nil {
		t.Fatal(err)
	}
	if large {
		rows := liveReportSamples/len(run.RubricSnapshot.Criteria) + 1
		if err := env.db.Gorm.Model(&models.Dataset{}).Where("id = ?", run.DatasetID).Update("row_count", rows).Error; err != nil {
			t.Fatal(err)
		}
	}
	env.h.forgetReports(id)
	return run
}

// heldBuilds replaces the summary build by one that counts its calls and
// waits for release (or fails while fail says so) before building.
type heldBuilds struct {
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
	fail    atomic.Bool
}

func holdBuilds(env *testEnv) *heldBuilds {
	hb := &heldBuilds{started: make(chan struct{}, 100), release: make(chan struct{})}
	env.h.reports.build = func(ctx context.Context, db *models.DB, wsID, runID int64, opt report.Options) (*report.Report, error) {
		hb.calls.Add(1)
		hb.started <- struct{}{}
		<-hb.release
		if hb.fail.Load() {
			return nil, errors.New("disk on fire")
		}
		return report.LoadSummary(ctx, db, wsID, runID, opt)
	}
	return hb
}

// within sends a request and fails if it does not answer in time: a
// request waiting for a held build would never answer.
func (env *testEnv) within(t *testing.T, path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- env.getAs(path, cookies...) }()
	select {
	case rec := <-done:
		return rec
	case <-time.After(time.Minute): // a held build never answers; a loaded machine does, within seconds
		t.Fatalf("GET %s did not answer in a minute: it waits for the summary's build", path)
		return nil
	}
}

// assertPreparing checks a 503 "being prepared" answer.
func assertPreparing(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s: %d, want 503: %.300s", what, rec.Code, rec.Body.String())
	}
	if ra := rec.Header().Get("Retry-After"); ra != strconv.Itoa(preparingRetrySeconds) {
		t.Errorf("%s: Retry-After %q", what, ra)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != "" {
		t.Errorf("%s: the error is sent as a download (%s)", what, cd)
	}
	var body APIError
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != "preparing" || !strings.Contains(body.Error.Message, "being computed") {
		t.Errorf("%s: body %q (%v)", what, rec.Body.String(), err)
	}
}

// TestLargeFinishedRunSummaryIsBuiltInTheBackground: a large finished run
// without a stored summary answers at once (the build is held, so a
// request waiting for it would never answer): the page with everything but
// the figures and a "Preparing results" card that reloads itself, the JSON
// export and the API's results 503 with Retry-After, the CSV export (no
// figures in it) at once; many requests at once start one build; once it
// is done the page shows the figures and every export answers 200.
func TestLargeFinishedRunSummaryIsBuiltInTheBackground(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := unstoredFinishedRun(t, env, true)
		hb := holdBuilds(env)
		base := "/runs/" + strconv.FormatInt(run.ID, 10)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		// With an account the server asks who is calling.
		ck := env.sessionCookie(owner)

		rec := env.within(t, base, ck)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("run page: %d %.500s", rec.Code, body)
		}
		for _, want := range []string{`data-testid="results-preparing"`, "Preparing results", "reloads itself",
			`<meta http-equiv="refresh" content="` + strconv.Itoa(preparingRetrySeconds) + `"`, `data-testid="progress"`, run.Name} {
			if !strings.Contains(body, want) {
				t.Errorf("the page while preparing lacks %q", want)
			}
		}
		if strings.Contains(body, `data-testid="results"`) || strings.Contains(body, `data-testid="preparing-failed"`) {
			t.Errorf("the page while preparing shows results or a failure")
		}
		select {
		case <-hb.started:
		case <-time.After(time.Minute):
			t.Fatal("the page started no build")
		}

		assertPreparing(t, "JSON export", env.within(t, base+"/export.json", ck))
		assertPreparing(t, "API results", api.get("/api/v1/runs/"+strconv.FormatInt(run.ID, 10)+"/results", tok))
		assertPreparing(t, "API JSON export", api.get("/api/v1/runs/"+strconv.FormatInt(run.ID, 10)+"/export.json", tok))
		// An experiment holding the run waits for its figures too, saying
		// so as the document describes (503 with Retry-After).
		exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: run.ProjectID, DatasetID: run.DatasetID, Name: "holding the large run"}
		if err := env.db.CreateExperiment(context.Background(), &exp); err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("experiment_id", exp.ID).Error; err != nil {
			t.Fatal(err)
		}
		assertPreparing(t, "API experiment", api.get("/api/v1/experiments/"+strconv.FormatInt(exp.ID, 10), tok))
		if rec := env.within(t, base+"/export.csv", ck); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "\n") {
			t.Errorf("CSV export while preparing: %d", rec.Code)
		}
		if rec := env.within(t, "/runs", ck); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "being computed") {
			t.Errorf("runs list while preparing: %d, says being computed: %v", rec.Code, strings.Contains(rec.Body.String(), "being computed"))
		}

		// Many readers at once: every one answers, one build runs.
		var wg sync.WaitGroup
		codes := make([]int, 12)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := base
				if i%2 == 1 {
					path = base + "/export.json"
				}
				codes[i] = env.getAs(path, ck).Code
			}()
		}
		wg.Wait()
		for i, code := range codes {
			if want := []int{http.StatusOK, http.StatusServiceUnavailable}[i%2]; code != want {
				t.Errorf("concurrent request %d: %d, want %d", i, code, want)
			}
		}
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds started for one summary, want 1", n)
		}

		close(hb.release)
		env.h.reports.settling.Wait()
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds in all, want 1", n)
		}
		rec = env.within(t, base, ck)
		if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="results"`) ||
			strings.Contains(body, `data-testid="results-preparing"`) || !strings.Contains(body, `data-testid="scatter"`) {
			t.Errorf("the page once built: %d, results %v", rec.Code, strings.Contains(body, `data-testid="results"`))
		}
		if rec := env.within(t, base+"/export.json", ck); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"pearson"`) {
			t.Errorf("JSON export once built: %d %.200s", rec.Code, rec.Body.String())
		}
		if rec := api.get("/api/v1/runs/"+strconv.FormatInt(run.ID, 10)+"/results", tok); rec.Code != http.StatusOK {
			t.Errorf("API results once built: %d", rec.Code)
		}
		// Stored, not only cached: a fresh process reads it.
		env.h.forgetReports(run.ID)
		if rec := env.within(t, base, ck); !strings.Contains(rec.Body.String(), `data-testid="results"`) {
			t.Errorf("the built summary was not stored")
		}
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds after the summary was stored, want 1", n)
		}
	})
}

// TestFailedBackgroundSummaryIsLoggedAndRetried: a background build that
// fails is logged; the page says so without any figure or error detail;
// readers within failedBuildPause do not start it again, the first after
// it does, and that build then shows the results.
func TestFailedBackgroundSummaryIsLoggedAndRetried(t *testing.T) {
	serialTest(t) // sets failedBuildPause
	old := failedBuildPause
	t.Cleanup(func() { failedBuildPause = old })
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := unstoredFinishedRun(t, env, true)
		var logs syncBuffer
		env.h.Log = slog.New(slog.NewTextHandler(&logs, nil))
		hb := holdBuilds(env)
		hb.fail.Store(true)
		close(hb.release)
		base := "/runs/" + strconv.FormatInt(run.ID, 10)

		if rec := env.within(t, base); !strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
			t.Fatalf("first page: %d, no preparing card", rec.Code)
		}
		env.h.reports.settling.Wait()
		if !strings.Contains(logs.String(), "disk on fire") || !strings.Contains(logs.String(), "run="+strconv.FormatInt(run.ID, 10)) {
			t.Errorf("the failed build was not logged with its run: %q", logs.String())
		}

		// Within the pause after a failure, readers do not start it again.
		failedBuildPause = time.Hour
		rec := env.within(t, base)
		if !strings.Contains(rec.Body.String(), `data-testid="preparing-failed"`) {
			t.Errorf("the page within the pause after a failed build does not say it failed")
		}
		env.h.reports.settling.Wait()
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds within the pause after a failure, want 1", n)
		}
		failedBuildPause = 0

		hb.fail.Store(false)
		rec = env.within(t, base)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="preparing-failed"`) || !strings.Contains(body, "Preparing results") {
			t.Errorf("the page after a failed build: %d, says it failed: %v", rec.Code, strings.Contains(body, `data-testid="preparing-failed"`))
		}
		for _, bad := range []string{"disk on fire", "goroutine", ".go:", `data-testid="results"`, `data-testid="scatter"`, "r = 0"} {
			if strings.Contains(body, bad) {
				t.Errorf("the page after a failed build shows %q", bad)
			}
		}
		env.h.reports.settling.Wait()
		if n := hb.calls.Load(); n != 2 {
			t.Errorf("%d builds, want 2 (the failed one and its retry)", n)
		}
		rec = env.within(t, base)
		if body := rec.Body.String(); !strings.Contains(body, `data-testid="results"`) || strings.Contains(body, `data-testid="preparing-failed"`) {
			t.Errorf("the page after the retry: %d, results %v", rec.Code, strings.Contains(body, `data-testid="results"`))
		}
	})
}

// TestSmallFinishedRunSummaryIsSharedInline: a small finished run without
// a stored summary is still built inside the request (the page shows its
// figures at once), and requests arriving together share one build.
func TestSmallFinishedRunSummaryIsSharedInline(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := unstoredFinishedRun(t, env, false)
		hb := holdBuilds(env)
		base := "/runs/" + strconv.FormatInt(run.ID, 10)
		bodies := make([]string, 6)
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bodies[i] = env.get(base).Body.String()
			}()
		}
		select {
		case <-hb.started:
		case <-time.After(time.Minute):
			t.Fatal("no build started")
		}
		// Let the other requests reach the build before it ends.
		time.Sleep(500 * time.Millisecond)
		close(hb.release)
		wg.Wait()
		for i, b := range bodies {
			if !strings.Contains(b, `data-testid="results"`) || strings.Contains(b, "Preparing results") {
				t.Errorf("request %d: no results inline", i)
			}
		}
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds for %d requests at once, want 1", n, len(bodies))
		}
	})
}

// TestLargeSummaryTheRunnerIsStoringIsNotBuiltTwice: while this process's
// runner stores a large finished run's summary (right after the run ends),
// the run page, its JSON export and the API answer that it is being
// prepared without starting a build of their own beside it (at a million
// samples the second build took the server from 2.3 to 3.6 GB); once the
// runner is done, a reader that still finds no summary builds it.
func TestLargeSummaryTheRunnerIsStoringIsNotBuiltTwice(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := unstoredFinishedRun(t, env, true)
		hb := holdBuilds(env)
		var storing atomic.Bool
		storing.Store(true)
		env.h.reports.storing = func(id int64) bool { return id == run.ID && storing.Load() }
		base := "/runs/" + strconv.FormatInt(run.ID, 10)

		rec := env.within(t, base)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
			t.Fatalf("run page while the runner stores its summary: %d, preparing %v", rec.Code, strings.Contains(rec.Body.String(), `data-testid="results-preparing"`))
		}
		assertPreparing(t, "JSON export", env.within(t, base+"/export.json"))
		select {
		case <-hb.started:
			t.Fatal("a reader built the summary the runner was storing")
		case <-time.After(300 * time.Millisecond):
		}
		if n := hb.calls.Load(); n != 0 {
			t.Fatalf("%d builds while the runner stored the summary, want 0", n)
		}

		// The runner gave up (its store failed): the next reader builds.
		storing.Store(false)
		if rec := env.within(t, base); !strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
			t.Errorf("the page after the runner's store ended, still without a summary, is not preparing it")
		}
		select {
		case <-hb.started:
		case <-time.After(time.Minute):
			t.Fatal("no reader built the summary once the runner was no longer storing it")
		}
		close(hb.release)
		env.h.reports.settling.Wait()
		if rec := env.within(t, base); !strings.Contains(rec.Body.String(), `data-testid="results"`) {
			t.Errorf("the page once built shows no results")
		}
	})
}
