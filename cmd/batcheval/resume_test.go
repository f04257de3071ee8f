package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestResumeCommand: `batcheval run` ends with a batch the judge refused;
// `batcheval resume RUN_ID` sends that batch only, and the run is complete.
func TestResumeCommand(t *testing.T) {
	var refusing atomic.Bool
	refusing.Store(true)
	g := runWithOneGap(t, &refusing, "warn", nil)
	fj, env, db, first := g.judge, g.env, g.db, g.first
	var out, errOut bytes.Buffer
	refusing.Store(false)
	sentBefore := len(fj.requests(false))
	out.Reset()
	errOut.Reset()
	if err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, env, &out, &errOut); err != nil {
		t.Fatalf("batcheval resume: %v\n%s", err, errOut.String())
	}
	if want := fmt.Sprintf("run %d succeeded: %d/%d batches, 0 failed, 0 scores missing", first.ID, faultBatches, faultBatches); !strings.Contains(out.String(), want) {
		t.Errorf("resume printed %q, want %q", out.String(), want)
	}
	// The summary `batcheval run` prints, with the resumed run's calls,
	// tokens and cost (resume printed only batches and retries).
	resumed := theRun(t, db, 0, models.Run.Finished)
	want := fmt.Sprintf("run %d: %d judge calls, %d judge retries, %d prompt + %d completion tokens, cost ",
		resumed.ID, resumed.Calls, resumed.Retries, resumed.PromptTokens, resumed.CompletionTokens)
	if resumed.Calls == 0 || !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), runSummaryLine(resumed)+"\n") {
		t.Errorf("resume's summary lacks %q (run's line %q); it printed:\n%s", want, runSummaryLine(resumed), errOut.String())
	}
	if sent := len(fj.requests(false)) - sentBefore; sent != 1 {
		t.Errorf("resume sent %d requests, want 1 (the gap)", sent)
	}
	wantComplete(t, theRun(t, db, 0, models.Run.Finished))
	if err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, env, &out, &errOut); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resume of a complete run: %v, want it refused", err)
	}
}

// TestRunAndResumeApplyTheJudgeNetworkPolicy: `batcheval resume` applies
// the judge network policy as serve does (it applied none, so the
// permissive default let a run's judge reach loopback and private
// addresses whatever the operator said; the judge package's default is
// now the safe policy), and `batcheval run` reads
// BATCHEVAL_JUDGE_ALLOW_LOOPBACK (it ignored it). A judge on a loopback
// port that the policy refuses gets no request at all; with the default
// policy (loopback allowed while BATCHEVAL_ADDR is loopback) the same
// resume finishes the run.
func TestRunAndResumeApplyTheJudgeNetworkPolicy(t *testing.T) {
	t.Cleanup(func() { judge.SetEgress(testEgress) })
	dsn := dbtest.DSN(t, models.SQLite)
	var refusing atomic.Bool
	refusing.Store(true)
	var mu sync.Mutex
	target := ""
	fj := newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
		mu.Lock()
		if target == "" && !rq.probe {
			target = rq.key
		}
		hit := rq.key == target
		mu.Unlock()
		if hit && refusing.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"error":{"message":"refused"}}`)
			return true
		}
		return false
	})
	base := map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": "warn"}
	envWith := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		}
	}
	noLoopback := envWith(map[string]string{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "false"})

	// run, loopback refused by the environment: nothing reaches the judge.
	var out, errOut bytes.Buffer
	err := run(context.Background(), runArgs(t, fj.URL()), noLoopback, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "loopback addresses are off") {
		t.Errorf("run with BATCHEVAL_JUDGE_ALLOW_LOOPBACK=false: %v, want the judge refused\n%s", err, errOut.String())
	}
	if n := len(fj.requests(true)); n != 0 {
		t.Fatalf("run with BATCHEVAL_JUDGE_ALLOW_LOOPBACK=false sent the judge %d requests, want none", n)
	}

	// A run with one gap, under the default policy.
	if err := run(context.Background(), runArgs(t, fj.URL()), envWith(nil), &out, &errOut); err != nil {
		t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
	}
	db := openDSN(t, dsn)
	var first models.Run
	var runs []models.Run
	if err := db.Gorm.Order("id").Find(&runs).Error; err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.BatchesFailed == 1 {
			first = r
		}
	}
	if first.ID == 0 || !first.Resumable() {
		t.Fatalf("no resumable run with one gap among %d runs", len(runs))
	}
	refusing.Store(false)

	// resume, loopback refused, by the environment and by the flag.
	for _, tc := range []struct {
		name string
		env  func(string) string
		args []string
	}{
		{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK=false", noLoopback, nil},
		{"--judge-allow-loopback=false", envWith(nil), []string{"--judge-allow-loopback=false"}},
	} {
		sentBefore := len(fj.requests(true))
		args := append(append([]string{"resume"}, tc.args...), fmt.Sprint(first.ID))
		err := run(context.Background(), args, tc.env, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "loopback addresses are off") {
			t.Errorf("resume with %s: %v, want the judge refused", tc.name, err)
		}
		if sent := len(fj.requests(true)) - sentBefore; sent != 0 {
			t.Errorf("resume with %s sent the judge %d requests, want none", tc.name, sent)
		}
	}

	// The default policy: the gap is sent and the run completes.
	sentBefore := len(fj.requests(false))
	out.Reset()
	if err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, envWith(nil), &out, &errOut); err != nil {
		t.Fatalf("batcheval resume: %v\n%s", err, errOut.String())
	}
	if sent := len(fj.requests(false)) - sentBefore; sent != 1 {
		t.Errorf("resume sent %d requests, want 1 (the gap)", sent)
	}
}

// TestResumeRefusalHintFitsAResumedRun: a run resumed by `batcheval
// resume` whose judge now refuses its temperature (an OpenAI reasoning
// model, simjudge.ReasoningModel) stops with a hint that fits a resumed run: it
// keeps the judge settings it started with, so neither "press Test
// connection on the judge's page" (what the error said) nor "run again
// with --default-sampling-only" (read as: resume again) helps; the hint
// says a new `batcheval run` with the flags does, and the answers stay
// stored.
func TestResumeRefusalHintFitsAResumedRun(t *testing.T) {
	reasoning := simjudge.ReasoningModel(simjudge.NewHandler(simjudge.Options{Seed: 4}), simjudge.Reasoning{})
	var refusing, reasoningModel atomic.Bool
	refusing.Store(true)
	g := runWithOneGap(t, &refusing, "error", func(w http.ResponseWriter, r *http.Request) bool {
		if reasoningModel.Load() {
			reasoning.ServeHTTP(w, r)
			return true
		}
		return false
	})
	env, db, first := g.env, g.db, g.first
	var out, errOut bytes.Buffer
	reasoningModel.Store(true)
	err := run(context.Background(), []string{"resume", fmt.Sprint(first.ID)}, env, &out, &errOut)
	if err == nil {
		t.Fatal("resume against a judge refusing max_tokens succeeded")
	}
	msg := err.Error()
	// The model refuses the run's temperature first (0.2; it takes only 1).
	for _, want := range []string{"takes only the default temperature", "a resumed run keeps the judge settings it started with",
		"start a new run instead, `batcheval run` with --default-sampling-only and --token-limit max_completion_tokens"} {
		if !strings.Contains(msg, want) {
			t.Errorf("resume's error lacks %q:\n%s", want, msg)
		}
	}
	for _, wrong := range []string{"Test connection", "judge's page", "run again with"} {
		if strings.Contains(msg, wrong) {
			t.Errorf("resume's error says %q, which cannot help a resumed run:\n%s", wrong, msg)
		}
	}
	after := theRun(t, db, 0, models.Run.Finished)
	if after.BatchesDone-after.BatchesFailed != first.BatchesDone-first.BatchesFailed {
		t.Errorf("answered batches %d after the refused resume, want the %d stored before", after.BatchesDone-after.BatchesFailed, first.BatchesDone-first.BatchesFailed)
	}
}

// TestInterruptedRunSaysHowToFinishIt: `batcheval run` stopped by Ctrl-C
// (its context cancelled) once some batches are answered says how far it
// got, that the answers are stored, and which command finishes it; it
// said "run N is stored; `batcheval serve` resumes it", and `batcheval
// resume N`, the command an operator reaches for, then refused with "it
// resumes by itself" and no more. resume now says what does resume it.
// Ids that are no run's are refused saying what to write.
// Ctrl-C is a real SIGINT to this process, caught by the context main
// makes (signalContext): the command then exits 130, the shell's status
// for it (it exited 1, as for a failure); TestInterruptedRunExitStatus
// checks the built program, for SIGTERM too.
func TestInterruptedRunSaysHowToFinishIt(t *testing.T) {
	dsn := dbtest.DSN(t, models.SQLite)
	fj := newFaultJudge(t, nil)
	env := func(k string) string {
		return map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": "error"}[k]
	}
	ctx, stop := signalContext(context.Background(), os.Interrupt)
	defer stop()
	var out, errOut bytes.Buffer
	ended := make(chan error, 1)
	go func() { ended <- run(ctx, runArgs(t, fj.URL(), "--concurrency", "1"), env, &out, &errOut) }()
	db := openDSN(t, dsn)
	theRun(t, db, 60*time.Second, func(r models.Run) bool { return r.BatchesDone > 0 })
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-ended
	if got := exitStatus(withStopSignal(ctx, err)); got != 130 {
		t.Errorf("interrupted by SIGINT, the command exits %d, want 130 (128 + SIGINT)", got)
	}
	stopped := theRun(t, db, 0, func(models.Run) bool { return true })
	if stopped.Finished() || stopped.BatchesDone == 0 || stopped.BatchesDone == stopped.BatchesTotal {
		t.Fatalf("the run is %s with %d/%d batches; want it stopped part way", stopped.Status, stopped.BatchesDone, stopped.BatchesTotal)
	}
	want := fmt.Sprintf("interrupted: run %d stopped with %d of %d batches answered, and every answer received is stored. "+
		"It is queued for `batcheval worker` or `batcheval serve` on this database", stopped.ID, stopped.BatchesDone, stopped.BatchesTotal)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("interrupted run: %v\nwant %q", err, want)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the interrupted run", []string{fmt.Sprint(stopped.ID)}, fmt.Sprintf("it resumes by itself once `batcheval worker` or `batcheval serve` works this database: start either if none is running (its %d answered batches are kept", stopped.BatchesDone)},
		{"queue only", []string{"--queue-only", fmt.Sprint(stopped.ID)}, "once `batcheval worker` or `batcheval serve` works this database"},
		{"an unknown run", []string{"999"}, "run 999 does not exist (or is not in this workspace), in the SQLite file " + dsn + " (--db or BATCHEVAL_DB; DATABASE_URL for PostgreSQL)"},
		{"zero", []string{"0"}, `"0" is not a run id: give the run's number, as its page and the run list show it (e.g. batcheval resume 12)`},
		{"a word", []string{"last"}, `"last" is not a run id`},
		{"no id", nil, "give the id of the run to resume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"resume"}, tc.args...), env, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("resume %v: %v\nwant %q", tc.args, err, tc.want)
			}
		})
	}
	if after := theRun(t, db, 0, func(models.Run) bool { return true }); after.BatchesDone != stopped.BatchesDone || after.Status != stopped.Status {
		t.Errorf("the refused resumes changed the run: %s %d/%d, was %s %d/%d", after.Status, after.BatchesDone, after.BatchesTotal, stopped.Status, stopped.BatchesDone, stopped.BatchesTotal)
	}
}

// oneGap is a finished `batcheval run` with one batch the judge refused.
type oneGap struct {
	judge *faultJudge
	env   func(string) string
	db    *models.DB
	first models.Run
}

// runWithOneGap runs `batcheval run` on a SQLite file against a fake judge
// that refuses (422) the first batch it is asked, and asks again, while
// refusing is set; serveFirst, when given, may answer a request before
// that (true: answered). It fails the test unless the run ends with that
// one gap, resumable.
func runWithOneGap(t *testing.T, refusing *atomic.Bool, logLevel string, serveFirst func(http.ResponseWriter, *http.Request) bool) oneGap {
	t.Helper()
	dsn := dbtest.DSN(t, models.SQLite)
	var mu sync.Mutex
	target := ""
	fj := newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
		if serveFirst != nil && serveFirst(w, r) {
			return true
		}
		mu.Lock()
		if target == "" && !rq.probe {
			target = rq.key
		}
		hit := rq.key == target
		mu.Unlock()
		if hit && refusing.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"error":{"message":"refused"}}`)
			return true
		}
		return false
	})
	env := func(k string) string {
		return map[string]string{"BATCHEVAL_DB": dsn, "BATCHEVAL_LOG_LEVEL": logLevel}[k]
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), runArgs(t, fj.URL()), env, &out, &errOut); err != nil {
		t.Fatalf("batcheval run: %v\n%s", err, errOut.String())
	}
	db := openDSN(t, dsn)
	first := theRun(t, db, 0, models.Run.Finished)
	if first.BatchesFailed != 1 || !first.Resumable() {
		t.Fatalf("first pass: %d failed batches, resumable %v; want one gap", first.BatchesFailed, first.Resumable())
	}
	return oneGap{judge: fj, env: env, db: db, first: first}
}
