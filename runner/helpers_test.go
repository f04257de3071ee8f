package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// eachDB runs fn on a fresh SQLite and a fresh PostgreSQL database, both
// migrated to head including River's schema.
func eachDB(t *testing.T, fn func(t *testing.T, env *testEnv)) {
	t.Helper()
	dbtest.Each(t, func(t *testing.T, db *models.DB) { fn(t, newTestEnv(t, db)) }, migrateJobs)
}

func migrateJobs(ctx context.Context, db *models.DB) error { return Migrate(ctx, db, nil) }

// testEnv is a database holding the seeded demo project, the way a fresh
// installation has it.
type testEnv struct {
	t       *testing.T
	db      *models.DB
	ws      models.Workspace
	project models.Project
	dataset models.Dataset
	rows    []models.DatasetRow
	// rubric is the demo rubric cut down to its first criterion (Engaging).
	rubric evaluator.Rubric
	// jobs is an insert-only runner used to read River's table.
	jobs *Runner
}

func newTestEnv(t *testing.T, db *models.DB) *testEnv {
	t.Helper()
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		t.Fatalf("seed demo: %v", err)
	}
	dss, err := db.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(dss) != 1 {
		t.Fatalf("demo datasets: %v (%d)", err, len(dss))
	}
	rows, err := db.ListDatasetRows(ctx, dss[0].ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 30 {
		t.Fatalf("demo dataset has %d rows, want 30", len(rows))
	}
	rub, err := demo.Rubric()
	if err != nil {
		t.Fatal(err)
	}
	rub.Criteria = rub.Criteria[:1]
	jobs, err := New(Config{DB: db, Log: testLog()})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{t: t, db: db, ws: ws, project: p, dataset: dss[0], rows: rows, rubric: rub, jobs: jobs}
}

// testLog discards the runner's logs unless RUNNER_TEST_LOG is set.
func testLog() *slog.Logger {
	if os.Getenv("RUNNER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// fastTuning keeps judge retries in milliseconds.
var fastTuning = JudgeTuning{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, MaxAttempts: 3}

// startRunner starts a working runner on the env's database, stopped when
// the test ends. Zero fields of cfg get test-friendly values; setup (if
// any) runs on the runner before it starts.
func (env *testEnv) startRunner(cfg Config, setup ...func(*Runner)) *Runner {
	env.t.Helper()
	if cfg.DB == nil {
		// A runner given its own handle (otherHandle) keeps it: its pool
		// stands for another process's.
		cfg.DB = env.db
	}
	cfg.Work = true
	if cfg.Log == nil {
		cfg.Log = testLog()
	}
	if cfg.PollInterval == 0 {
		// Why 20ms: SQLite has no LISTEN/NOTIFY, and tests should not wait
		// a second for a launched run to start.
		cfg.PollInterval = 20 * time.Millisecond
	}
	if cfg.JudgeTuning == (JudgeTuning{}) {
		cfg.JudgeTuning = fastTuning
	}
	r, err := New(cfg)
	if err != nil {
		env.t.Fatal(err)
	}
	for _, f := range setup {
		f(r)
	}
	if err := r.Start(context.Background()); err != nil {
		env.t.Fatal(err)
	}
	env.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(ctx)
	})
	return r
}

// newRun describes a BatchEval run of the demo dataset on the env's
// one-criterion rubric, judged by the endpoint at baseURL.
func (env *testEnv) newRun(baseURL string, rounds, concurrency, timeoutSeconds int) models.Run {
	s := evaluator.DefaultSettings()
	s.Rounds = rounds
	s.BatchSize = 10
	in, out := 1.0, 2.0
	return models.Run{
		WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: env.dataset.ID,
		Name: env.t.Name(), Method: models.MethodBatchEval, Settings: s, RubricSnapshot: env.rubric,
		JudgeSnapshot: models.JudgeSnapshot{Name: "fake", BaseURL: baseURL, Model: "fake-judge",
			MaxConcurrency: concurrency, TimeoutSeconds: timeoutSeconds, PriceInputPerMTok: &in, PriceOutputPerMTok: &out},
	}
}

// launch stores and enqueues run through r.
func (env *testEnv) launch(r *Runner, run models.Run) models.Run {
	env.t.Helper()
	if err := r.Launch(context.Background(), &run); err != nil {
		env.t.Fatalf("launch: %v", err)
	}
	if run.JobID == nil {
		env.t.Fatal("launch recorded no job id")
	}
	return run
}

func (env *testEnv) getRun(id int64) models.Run {
	env.t.Helper()
	run, err := env.db.GetRun(context.Background(), id)
	if err != nil {
		env.t.Fatal(err)
	}
	return run
}

// waitRun polls the run until cond holds, calling tick (if any) between
// polls, and fails the test after within.
func (env *testEnv) waitRun(id int64, within time.Duration, what string, cond func(models.Run) bool, tick ...func()) models.Run {
	env.t.Helper()
	deadline := time.Now().Add(within)
	for {
		run := env.getRun(id)
		if cond(run) {
			return run
		}
		if time.Now().After(deadline) {
			env.t.Fatalf("waited %s for run %d to be %s; it is %s with %d/%d batches done (error %q)",
				within, id, what, run.Status, run.BatchesDone, run.BatchesTotal, run.Error)
		}
		for _, f := range tick {
			f()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (env *testEnv) waitFinished(id int64, within time.Duration, tick ...func()) models.Run {
	env.t.Helper()
	return env.waitRun(id, within, "finished", models.Run.Finished, tick...)
}

func (env *testEnv) batches(runID int64) []models.RunBatch {
	env.t.Helper()
	bs, err := env.db.ListBatches(context.Background(), runID)
	if err != nil {
		env.t.Fatal(err)
	}
	return bs
}

func (env *testEnv) scores(runID int64) []models.RunScore {
	env.t.Helper()
	ss, err := env.db.ListScores(context.Background(), runID)
	if err != nil {
		env.t.Fatal(err)
	}
	return ss
}

// scoresByBatch groups a run's scores by batch id.
func (env *testEnv) scoresByBatch(runID int64) map[int64][]models.RunScore {
	out := map[int64][]models.RunScore{}
	for _, s := range env.scores(runID) {
		out[s.BatchID] = append(out[s.BatchID], s)
	}
	return out
}

func (env *testEnv) job(id int64) *rivertype.JobRow {
	env.t.Helper()
	j, err := env.jobs.river.JobGet(context.Background(), id)
	if err != nil {
		env.t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// batchKey identifies a batch's prompt as the judge sees it: the request
// seed (the run's seed plus the round) and the batch prompt, which holds the
// criterion and the samples. Batch and repair requests share the key.
func batchKey(seed int64, prompt string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", seed, prompt)))
	return hex.EncodeToString(h[:8])
}

// storedKey is the batchKey of a stored batch, from the request it recorded.
func storedKey(run models.Run, b models.RunBatch) string {
	for _, m := range DecodeMessages(b.Request) {
		if m.Role == "user" {
			return batchKey(run.Settings.Seed+int64(b.Round), m.Content)
		}
	}
	return ""
}

// judgeCall is one request as the fake judge sees it.
type judgeCall struct {
	Key    string // batchKey of the batch the request is about
	Repair bool   // a repair request (the conversation holds an answer)
	Probe  bool   // the breaker's probe (judge.Client.Ping), not a batch
	// N counts the requests of this key and kind so far, this one
	// included: 1 for the first batch request, 2 for its first retry...
	N int
	// Total counts every request so far, this one included.
	Total int
}

// fault may answer a request itself (returning true) instead of the
// simulated judge. It runs concurrently for concurrent requests.
type fault func(w http.ResponseWriter, r *http.Request, c judgeCall) bool

// fakeJudge is an OpenAI-compatible endpoint that delegates to the
// simulated judge, so answers are realistic, after letting a fault
// intercept each request; it counts everything it sees.
type fakeJudge struct {
	srv   *httptest.Server
	inner http.Handler
	fault fault

	// release ends requests a fault holds (see hang) when the test ends.
	release     chan struct{}
	releaseOnce sync.Once

	mu       sync.Mutex
	total    int
	answered int                    // requests the simulated judge answered
	inFlight int                    // requests being handled now
	counts   map[string]int         // key (+"/repair") -> requests
	times    map[string][]time.Time // key (+"/repair") -> arrival times
	order    []string               // batch keys in order of first arrival
}

func newFakeJudge(t *testing.T, opts simjudge.Options, f fault) *fakeJudge {
	t.Helper()
	fj := &fakeJudge{inner: simjudge.NewHandler(opts), fault: f, release: make(chan struct{}),
		counts: map[string]int{}, times: map[string][]time.Time{}}
	fj.srv = httptest.NewServer(http.HandlerFunc(fj.serve))
	// Cleanups run last-in first-out: the server closes after every runner
	// registered later has stopped, and held requests are released first.
	t.Cleanup(fj.srv.Close)
	return fj
}

// releaseHeld lets requests held by hang go; call it in a cleanup
// registered after the runners so it runs before they stop.
func (fj *fakeJudge) releaseHeld() { fj.releaseOnce.Do(func() { close(fj.release) }) }

// URL is the base URL to configure the judge with.
func (fj *fakeJudge) URL() string { return fj.srv.URL + "/v1" }

func (fj *fakeJudge) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	c := readCall(body)
	kind := c.Key
	if c.Repair {
		kind += "/repair"
	}
	fj.mu.Lock()
	fj.total++
	fj.inFlight++
	if fj.counts[c.Key] == 0 && fj.counts[c.Key+"/repair"] == 0 {
		fj.order = append(fj.order, c.Key)
	}
	fj.counts[kind]++
	fj.times[kind] = append(fj.times[kind], time.Now())
	c.N, c.Total = fj.counts[kind], fj.total
	fj.mu.Unlock()
	defer func() {
		fj.mu.Lock()
		fj.inFlight--
		fj.mu.Unlock()
	}()

	if fj.fault != nil && fj.fault(w, r, c) {
		return
	}
	fj.inner.ServeHTTP(w, r)
	fj.mu.Lock()
	fj.answered++
	fj.mu.Unlock()
}

// readCall finds the batch prompt (the first user message) and the seed.
func readCall(body []byte) judgeCall {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Seed int64 `json:"seed"`
	}
	_ = json.Unmarshal(body, &req)
	var c judgeCall
	prompt := ""
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			if prompt == "" {
				prompt = messageText(m.Content)
			}
		case "assistant":
			c.Repair = true
		}
	}
	c.Key = batchKey(req.Seed, prompt)
	// judge's pingPrompt, the one request no method sends.
	c.Probe = prompt == "Reply with the single word OK."
	return c
}

// messageText reads a content given as a string or as text parts.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Stats.

func (fj *fakeJudge) Total() int {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	return fj.total
}

func (fj *fakeJudge) Answered() int {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	return fj.answered
}

func (fj *fakeJudge) InFlight() int {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	return fj.inFlight
}

// Count is the number of batch (repair false) or repair requests of key.
func (fj *fakeJudge) Count(key string, repair bool) int {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	if repair {
		key += "/repair"
	}
	return fj.counts[key]
}

// Times are the arrival times of the batch or repair requests of key.
func (fj *fakeJudge) Times(key string, repair bool) []time.Time {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	if repair {
		key += "/repair"
	}
	return append([]time.Time(nil), fj.times[key]...)
}

// Keys lists the batch keys seen, in order of first arrival.
func (fj *fakeJudge) Keys() []string {
	fj.mu.Lock()
	defer fj.mu.Unlock()
	return append([]string(nil), fj.order...)
}

// hang holds a request until the client gives up on it (its context ends)
// or the test releases it, and reports whether the client gave up.
func (fj *fakeJudge) hang(r *http.Request) bool {
	select {
	case <-r.Context().Done():
		return true
	case <-fj.release:
		return false
	}
}

// Faults.

// writeAPIError answers in OpenAI's error shape.
func writeAPIError(w http.ResponseWriter, status int, header map[string]string, msg string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"test_fault","param":null,"code":null}}`, msg)
}

// writeCompletion answers 200 with a chat completion whose text is text.
func writeCompletion(w http.ResponseWriter, text string) {
	resp := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": "fake-judge",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// target remembers the first batch the fake judge sees, so a fault can
// pick on one batch of a run.
type target struct {
	mu  sync.Mutex
	key string
}

// is reports whether c is about the target batch, choosing it on the
// first call.
func (tg *target) is(c judgeCall) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.key == "" {
		tg.key = c.Key
	}
	return tg.key == c.Key
}

func (tg *target) get() string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.key
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
