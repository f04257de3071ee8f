package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/runner"
)

// testEnv is the real Echo app on a real database, with a working runner
// and the simulated judge, as `batcheval serve` wires them.
type testEnv struct {
	t       *testing.T
	db      *models.DB
	h       *Handlers
	e       *echo.Echo
	runner  *runner.Runner
	sim     *simjudge.Server
	ws      models.Workspace
	project models.Project // the seeded demo project
}

func newTestEnv(t *testing.T, db *models.DB) *testEnv {
	t.Helper()
	ctx := context.Background()
	if err := runner.Migrate(ctx, db, nil); err != nil {
		t.Fatalf("migrate jobs: %v", err)
	}
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		t.Fatalf("seed demo: %v", err)
	}
	sim, err := simjudge.Start(simjudge.Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{DB: db, Log: log, Work: true, SimulatedURL: sim.URL, PollInterval: 50 * time.Millisecond, MailBackoff: 10 * time.Millisecond,
		JudgeTuning: runner.JudgeTuning{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	h, e := newTestHandlers(t, db, r, ws, sim.URL)
	return &testEnv{t: t, db: db, h: h, e: e, runner: r, sim: sim, ws: ws, project: p}
}

// newTestHandlers is a server process's handlers on db, registered on an
// Echo of their own, as the tests run them.
func newTestHandlers(t *testing.T, db *models.DB, r *runner.Runner, ws models.Workspace, simURL string) (*Handlers, *echo.Echo) {
	t.Helper()
	h, err := New(db, r, slog.New(slog.DiscardHandler), ws)
	if err != nil {
		t.Fatal(err)
	}
	h.SimulatedURL = simURL
	// Failed sign-ins' audit entries are written before the database closes.
	t.Cleanup(h.WaitSignInAudits)
	// A running run's page shows figures as of the view, as the tests
	// read them, unless a test bounds the wait (liveFigures.wait).
	h.live.wait = time.Minute
	// Tests run as the local user of a loopback server with no accounts
	// (the default of `make run`); accounts_test.go covers the rest.
	h.LocalMode = true
	// httptest.NewRequest sends Host: example.com.
	h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
	e := echo.New()
	h.Register(e)
	return h, e
}

// eachDB runs fn on SQLite and PostgreSQL; a top-level test calling it
// runs in parallel with the others unless it called serialTest first
// (see parallel_test.go).
func eachDB(t *testing.T, fn func(t *testing.T, env *testEnv)) {
	parallelTest(t)
	dbtest.Each(t, func(t *testing.T, db *models.DB) { fn(t, newTestEnv(t, db)) })
}

// do sends a request through the real Echo instance.
func (env *testEnv) do(method, path string, body io.Reader, contentType string) *httptest.ResponseRecorder {
	env.t.Helper()
	req := httptest.NewRequest(method, path, body)
	if contentType != "" {
		req.Header.Set(echo.HeaderContentType, contentType)
	}
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	return rec
}

func (env *testEnv) get(path string) *httptest.ResponseRecorder {
	return env.do(http.MethodGet, path, nil, "")
}

func (env *testEnv) postForm(path string, form url.Values) *httptest.ResponseRecorder {
	return env.do(http.MethodPost, path, strings.NewReader(form.Encode()), echo.MIMEApplicationForm)
}

// waitRun polls until the run reaches a final state.
func (env *testEnv) waitRun(runID int64, within time.Duration) models.Run {
	env.t.Helper()
	deadline := time.Now().Add(within)
	for {
		run, err := env.db.GetRun(context.Background(), runID)
		if err != nil {
			env.t.Fatal(err)
		}
		if run.Finished() {
			// And its statistics, stored after the end: a test changing
			// the run's scores next would otherwise race with them.
			if env.runner != nil {
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				env.runner.WaitStats(ctx)
				cancel()
			}
			return run
		}
		if time.Now().After(deadline) {
			env.t.Fatalf("run %d still %s after %s (batches %d/%d)", runID, run.Status, within, run.BatchesDone, run.BatchesTotal)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// localCtx is a context carrying the local user, for calling handler
// helpers directly as a request of `make run` would.
func (env *testEnv) localCtx() context.Context {
	return context.WithValue(context.Background(), principalKey{}, Principal{Kind: LocalUser, Workspace: env.ws, Role: models.RoleOwner})
}

// runOnFakeJudge saves a judge named name whose endpoint is handler (a
// local fake serving /v1), launches form on it and returns the run once
// it has ended, with the judge. The fake lives until the test ends.
func (env *testEnv) runOnFakeJudge(name string, handler http.HandlerFunc, form url.Values) (models.Run, models.Judge) {
	env.t.Helper()
	srv := httptest.NewServer(handler)
	env.t.Cleanup(srv.Close)
	j := models.Judge{WorkspaceID: env.ws.ID, Name: name, BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
		Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
	if err := env.db.SaveJudge(context.Background(), &j); err != nil {
		env.t.Fatal(err)
	}
	form.Set("judge", strconv.FormatInt(j.ID, 10))
	return env.waitRun(env.launch(form), 60*time.Second), j
}

// refusingJudge answers every call with status and an OpenAI-shaped error
// carrying message.
func refusingJudge(status int, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, message)
	}
}
