package runner

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// logWatch is a log handler that passes records on and closes seen the
// first time a message starting with prefix is logged.
type logWatch struct {
	slog.Handler
	prefix string
	seen   chan struct{}
	once   *sync.Once
}

func (h logWatch) Handle(ctx context.Context, rec slog.Record) error {
	if strings.HasPrefix(rec.Message, h.prefix) {
		h.once.Do(func() { close(h.seen) })
	}
	return h.Handler.Handle(ctx, rec)
}

func (h logWatch) Enabled(context.Context, slog.Level) bool { return true }

func (h logWatch) WithAttrs(as []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(as)
	return h
}

func (h logWatch) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

// TestLateAnswerOfForgottenExecutionCountedBeforeStop: a worker's
// execution has a call out when its lease lapses (the database was down);
// another process's sweep requeues the run's job, and this same process
// fetches it again: a second execution claims the run, asks the judge for
// the held batch again and finishes the run. River knows a running job by
// its id, so the second execution's end made it forget the first: Stop
// returned at once, the process closed its database, and the first
// execution's answer (paid for) was never counted (TestFaultPostgresRestarted
// failed about one run in four: the run counted a call fewer than the judge
// answered). Stop now waits for every execution of the process: the held
// answer comes back while Stop waits (only then: no timing luck), and the
// run counts every call the judge answered, the late one too.
func TestLateAnswerOfForgottenExecutionCountedBeforeStop(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		letGo := make(chan struct{})
		var letGoOnce sync.Once
		release := func() { letGoOnce.Do(func() { close(letGo) }) }
		var held atomic.Bool
		out := make(chan struct{})
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if !held.CompareAndSwap(false, true) {
				return false // answered by the simulated judge
			}
			close(out)
			<-letGo
			return false
		})
		waiting := logWatch{Handler: testLog().Handler(), prefix: "worker stopping: waiting for executions",
			seen: make(chan struct{}), once: &sync.Once{}}
		r := env.startRunner(Config{LeaseTTL: 2 * time.Second, Log: slog.New(waiting)})
		t.Cleanup(release) // before the runner's stop (cleanups run last first)
		// A run that reuses no answers, as the fault test's: the second
		// execution asks the judge again rather than join the first's
		// call (judge.Flights).
		spec := env.newRun(fj.URL(), 1, 1, 60)
		spec.Settings.NoCache = true
		run := env.launch(r, spec)
		select {
		case <-out:
		case <-time.After(60 * time.Second):
			t.Fatal("the run sent no call in 60 s")
		}
		// The database outage, as another worker's sweep ends it: the
		// first execution's lease has lapsed, and its job is requeued to
		// this process's queue.
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = 'worker-cut-off', lease_until = ? WHERE id = ?`,
			time.Now().UTC().Add(-time.Minute), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		if ok, err := env.db.RequeueJob(context.Background(), *run.JobID, r.cfg.Queue); err != nil || !ok {
			t.Fatalf("requeue the run's job: %v (requeued %v)", err, ok)
		}
		r.wakeHere()
		done := env.waitFinished(run.ID, 60*time.Second)
		if done.Status != models.RunSucceeded {
			t.Fatalf("run %s (%q), want it finished by the second execution", done.Status, done.Error)
		}
		if n := fj.Total(); n != len(env.batches(run.ID))+1 {
			t.Fatalf("the judge was sent %d calls, want each of the %d batches once and the held one twice", n, len(env.batches(run.ID)))
		}

		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stopped <- r.Stop(ctx)
		}()
		var stopErr error
		select {
		case <-waiting.seen:
			// Stop waits for the first execution: its answer comes back.
			release()
			stopErr = <-stopped
		case stopErr = <-stopped:
			// Returned with the first execution's call still out: its
			// answer would come back to a closed database.
		case <-time.After(60 * time.Second):
			release()
			t.Fatal("Stop neither returned nor waited for the first execution in 60 s")
		}
		if stopErr != nil {
			t.Errorf("stop: %v", stopErr)
		}
		got := env.getRun(run.ID)
		if sent := fj.Total(); got.Calls != sent {
			t.Errorf("after Stop the run counts %d calls; the judge was sent %d: a paid answer was not counted", got.Calls, sent)
		}
		if got.Status != models.RunSucceeded || got.BatchesDone != len(env.batches(run.ID)) {
			t.Errorf("run %s with %d batches done; want it finished with every batch (the late answer changes no score)", got.Status, got.BatchesDone)
		}
		if evs := env.lateEvents(run.ID); len(evs) != 1 || !strings.Contains(evs[0].Message, "1 call") {
			t.Errorf("late-count events %+v; want one saying 1 call was added after the run ended", evs)
		}
	})
}
