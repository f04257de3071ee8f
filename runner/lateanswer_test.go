package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/internal/money"
	"github.com/batcheval/batcheval/models"
)

// billing sums the usage of every answer a fake judge sent, as the
// provider bills it.
type billing struct {
	mu                 sync.Mutex
	prompt, completion int
}

func (b *billing) add(p, c int) {
	b.mu.Lock()
	b.prompt, b.completion = b.prompt+p, b.completion+c
	b.mu.Unlock()
}

func (b *billing) get() (int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prompt, b.completion
}

// serveBilled answers r with the simulated judge, noting its usage.
func serveBilled(t *testing.T, fj *fakeJudge, bill *billing, w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	fj.inner.ServeHTTP(rec, r)
	var body struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Errorf("simulated answer: %v", err)
	}
	bill.add(body.Usage.PromptTokens, body.Usage.CompletionTokens)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// heldRun is a run whose first judge call is out when the test takes the
// run from its worker: the judge answers that call (with late) only once
// the test lets it go; every other call the simulated judge answers, and
// every answer's usage is billed.
type heldRun struct {
	env  *testEnv
	fj   *fakeJudge
	r    *Runner
	run  models.Run
	bill *billing
	go_  chan struct{}
}

// startHeld launches the run. late answers the held call after the test
// let it go, billing what it bills; it returns after the held call is out.
// timeoutSeconds is the judge's timeout.
func startHeld(t *testing.T, env *testEnv, timeoutSeconds int, late func(w http.ResponseWriter, r *http.Request, h *heldRun)) *heldRun {
	t.Helper()
	h := &heldRun{env: &testEnv{}, bill: &billing{}, go_: make(chan struct{})}
	// The subtest's env: its failures are the subtest's.
	*h.env = *env
	h.env.t = t
	env = h.env
	var held atomic.Bool
	out := make(chan struct{})
	h.fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
		if held.CompareAndSwap(false, true) {
			close(out)
			select {
			case <-h.go_:
			case <-h.fj.release:
				return true
			}
			late(w, r, h)
			return true
		}
		serveBilled(t, h.fj, h.bill, w, r)
		return true
	})
	h.r = env.startRunner(Config{LeaseTTL: 2 * time.Second}) // takeOver reads this TTL
	t.Cleanup(h.fj.releaseHeld)
	h.run = env.launch(h.r, env.newRun(h.fj.URL(), 1, 1, timeoutSeconds))
	select {
	case <-out:
	case <-time.After(60 * time.Second):
		t.Fatal("the run sent no call in 60 s")
	}
	return h
}

// takeOver gives the run to another worker while the call is out: one
// whose lease lapses soon after (as if it died; the run goes on) when end
// is "", or one that ended the run with status end, the call's batch
// still pending (cancelled, failed, or finished without it).
func (h *heldRun) takeOver(end string) {
	h.env.t.Helper()
	// The worker renews its lease every TTL/3 (startHeld: 2s), each renewal
	// setting lease_until a TTL on: its next renewal is due a TTL/3 after
	// the last one, at lease_until less 2/3 of a TTL.
	const ttl = 2 * time.Second
	nextRenewal := time.Now().Add(ttl / 3)
	if before := h.env.getRun(h.run.ID); before.LeaseUntil != nil {
		nextRenewal = before.LeaseUntil.Add(-2 * ttl / 3)
	}
	var err error
	if end == "" {
		err = h.env.db.Gorm.Exec(`UPDATE runs SET lease_owner = 'successor', lease_until = ? WHERE id = ?`,
			time.Now().UTC().Add(1500*time.Millisecond), h.run.ID).Error
	} else {
		err = h.env.db.Gorm.Exec(`UPDATE runs SET lease_owner = '', lease_until = NULL, status = ?, finished_at = ? WHERE id = ?`,
			end, time.Now().UTC(), h.run.ID).Error
	}
	if err != nil {
		h.env.t.Fatal(err)
	}
	if end != "" {
		// The worker notices at its next renewal and stops sending: wait
		// for that renewal and 300ms for it to be done (was a fixed
		// second). One due about now may have come before the takeover:
		// then the one after it.
		wait := min(time.Until(nextRenewal), ttl/3)
		if wait < 100*time.Millisecond {
			wait += ttl / 3
		}
		time.Sleep(wait + 300*time.Millisecond)
	} else {
		// The answer comes back before the worker's renewal notices: its
		// store, or the fence of its next call, finds the lease lost, and
		// the worker snoozes its job to claim the run again once the
		// successor's lease has lapsed (as TestLateAnswerAfterLeaseLossIsKept).
		time.Sleep(100 * time.Millisecond)
	}
	close(h.go_)
	if end == "" {
		h.successorDied()
	}
}

// successorDied makes the run go on after takeOver("") whichever way the
// worker noticed the takeover. Its store, or the fence of its next call,
// finds the lease lost and snoozes the job, which claims the run again once
// the successor's lease has lapsed. But its lease renewal (every TTL/3) may
// see the successor's lease first: under the race detector at load 20 the
// answer came back after it in a third of the runs on SQLite. The worker
// then takes the run for one its successor goes on with and ends its job,
// as it should: a real successor takes a run over by its job (the lease
// sweep requeues it), and holds that job running when it dies, so the
// sweep requeues it again once the successor's lease lapses. This successor is only a lease,
// and the run was left running with its job completed, for ever (a flake,
// not a fault of the worker). Here the job is given back the state the
// successor's death leaves it in.
func (h *heldRun) successorDied() {
	h.env.t.Helper()
	env := h.env
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if run := env.getRun(h.run.ID); run.LeaseOwner != "successor" || run.Finished() {
			return // claimed again: the worker snoozed its job
		}
		if j := env.job(*h.run.JobID); j.State == rivertype.JobStateCompleted {
			// Only while the successor still holds the run.
			err := env.db.Gorm.Exec(`UPDATE river_job SET state = 'running', finalized_at = NULL WHERE id = ? AND state = 'completed'
				AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = ? AND lease_owner = 'successor')`,
				*h.run.JobID, h.run.ID, models.RunRunning).Error
			if err != nil {
				env.t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			env.t.Fatal("the worker neither claimed the run again nor ended its job in 60 s after the takeover")
		}
	}
}

// lateEvents are the run's late-count events.
func (env *testEnv) lateEvents(runID int64) []models.RunEvent {
	env.t.Helper()
	evs, err := env.db.RunEvents(context.Background(), runID)
	if err != nil {
		env.t.Fatal(err)
	}
	var out []models.RunEvent
	for _, ev := range evs {
		if ev.Kind == models.RunEventLateCount {
			out = append(out, ev)
		}
	}
	return out
}

// wantBilled checks that the run counts calls calls sent to the judge and
// exactly the tokens the judge billed, priced as newRun prices them.
func (h *heldRun) wantBilled(t *testing.T, got models.Run, calls int) {
	t.Helper()
	prompt, completion := h.bill.get()
	// Calls less those the answer cache answered: the calls sent.
	if got.PaidCalls() != calls || got.PromptTokens != prompt || got.CompletionTokens != completion {
		t.Errorf("run counts %d calls (%d from the answer cache), %d+%d tokens; the judge was sent %d calls and billed %d+%d tokens",
			got.Calls, got.CachedCalls, got.PromptTokens, got.CompletionTokens, calls, prompt, completion)
	}
	// newRun's prices: $1 and $2 per million.
	want := (float64(prompt)*1 + float64(completion)*2) / 1e6
	if got.CostUSD == nil || math.Abs(*got.CostUSD-want) > 1e-9 {
		t.Errorf("run cost %v, want %g", orNilCost(got.CostUSD), want)
	}
}

// wantEndedCount checks a run that ended while its one call was out: the
// call is counted, once, its batch left pending, and the run's events say
// that its figures changed after it ended: one event for the call, and one
// for each of retried failed attempts (worth trying again) it counted
// among the run's retries after the end.
func (h *heldRun) wantEndedCount(t *testing.T, end string, retried int) {
	t.Helper()
	env := h.env
	got := env.waitRun(h.run.ID, 60*time.Second, "counting the call that came back late", func(r models.Run) bool { return r.Calls > 0 })
	time.Sleep(300 * time.Millisecond) // anything counted twice would be by now
	got = env.getRun(h.run.ID)
	if n := h.fj.Total(); n != 1 {
		t.Errorf("the judge was sent %d calls, want the held one only", n)
	}
	h.wantBilled(t, got, 1)
	if got.Status != end || got.BatchesDone != 0 || len(env.scores(h.run.ID)) != 0 {
		t.Errorf("run %s with %d batches done, %d scores; want %s with none (its end stands)", got.Status, got.BatchesDone, len(env.scores(h.run.ID)), end)
	}
	var evs, retries []models.RunEvent
	for _, ev := range env.lateEvents(h.run.ID) {
		if strings.Contains(ev.Message, "added to the run's retries: 1 failed attempt") {
			retries = append(retries, ev)
			continue
		}
		evs = append(evs, ev)
	}
	if len(retries) != retried || got.Retries != retried {
		t.Errorf("%d late-count events for a retry, the run counts %d retries; want %d of each", len(retries), got.Retries, retried)
	}
	if len(evs) != 1 {
		t.Fatalf("%d late-count events for the call, want 1", len(evs))
	}
	if !strings.Contains(evs[0].Message, "after the run ended") || !strings.Contains(evs[0].Message, "1 call,") || evs[0].Worker == "" {
		t.Errorf("late-count event %+v: want it to say that 1 call was added after the run ended, and by which worker", evs[0])
	}
}

// TestLateAnswerCountedWhenRunEndedWithBatchPending: a worker loses the
// run while one of its calls is out, and the run ends (cancelled, failed,
// or finished without that batch) before the answer comes back. The
// answer is not stored (the run's end stands), but it was paid for: its
// call, tokens and cost are counted on the run, once, and the run's events
// say that the figures changed after the run ended (regression: the late
// answer of a batch still pending was dropped uncounted).
func TestLateAnswerCountedWhenRunEndedWithBatchPending(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, end := range []string{models.RunCancelled, models.RunFailed, models.RunSucceeded} {
			t.Run(end, func(t *testing.T) {
				h := startHeld(t, env, 30, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
					serveBilled(t, h.fj, h.bill, w, r)
				})
				h.takeOver(end)
				h.wantEndedCount(t, end, 0)
			})
		}
	})
}

// lateFailures are the ways a call that went out can fail after the
// worker lost the run: each is paid for (or may be), as a call.
var lateFailures = []struct {
	name    string
	timeout int // the judge's timeout, seconds
	// quick: the failure comes back before the worker's renewal notices
	// the lost lease (see takeOver), so the run can go on with it
	quick bool
	// retried: the failure is worth trying again, so it counts among
	// the run's retries (at once, after the run ended)
	retried int
	answer  func(w http.ResponseWriter, r *http.Request, h *heldRun)
}{
	{"judge error", 30, true, 0, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
		writeAPIError(w, http.StatusBadRequest, nil, "the model does not take this request")
	}},
	{"unreadable answer that was billed", 30, true, 1, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
		h.bill.add(70, 3)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":70,"completion_tokens":3,"total_tokens":73}}`))
	}},
	{"timeout after the request was sent", 1, false, 1, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
		<-r.Context().Done() // the client gives up
	}},
}

// TestLateFailureCountedAfterLeaseLoss: a call already out when its
// worker lost the run comes back failed (a judge error, a billed answer
// that cannot be read, a timeout after the request was sent). It went
// out, so it counts as the normal path counts a failed call: one call,
// and what the endpoint billed for it, once, also when the run has ended
// meanwhile (then the run's events say so) and when the run goes on with
// its successor, which tries the batch again (regression: the failure's
// call was dropped, so the run counted fewer calls than the judge was
// sent, and its billed tokens were dropped with the lost lease).
func TestLateFailureCountedAfterLeaseLoss(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, f := range lateFailures {
			t.Run(f.name+", run ended", func(t *testing.T) {
				h := startHeld(t, env, f.timeout, f.answer)
				h.takeOver(models.RunCancelled)
				h.wantEndedCount(t, models.RunCancelled, f.retried)
			})
			if !f.quick {
				continue
			}
			t.Run(f.name+", run goes on", func(t *testing.T) {
				h := startHeld(t, env, f.timeout, f.answer)
				h.takeOver("")
				got := h.env.waitFinished(h.run.ID, 60*time.Second)
				if got.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s), want succeeded once resumed", got.Status, got.Error)
				}
				h.wantBilled(t, got, h.fj.Total())
				if evs := h.env.lateEvents(h.run.ID); len(evs) != 0 {
					t.Errorf("late-count events %+v on a run that had not ended, want none", evs)
				}
			})
		}
	})
}

// TestLateAnswerLeftPendingCountedAfterLeaseLoss: the held call is
// answered without scores after the worker lost the run, so its unit
// needs a repair call, which the lost lease stops: the unit is left
// pending with its answered call counted (leavePending). That count is
// about money spent, not about who holds the run: it is made without the
// lease (regression: fenced on the lease, it was dropped, and when the
// run had ended the paid call never reached its figures), once: the
// resume that answers the batch does not count the call again.
func TestLateAnswerLeftPendingCountedAfterLeaseLoss(t *testing.T) {
	t.Parallel()
	noScores := func(w http.ResponseWriter, r *http.Request, h *heldRun) {
		h.bill.add(100, 20) // writeCompletion's usage
		writeCompletion(w, "I cannot score these samples.")
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		t.Run("run ended", func(t *testing.T) {
			h := startHeld(t, env, 30, noScores)
			h.takeOver(models.RunCancelled)
			h.wantEndedCount(t, models.RunCancelled, 0)
			calls := 0
			for _, b := range h.env.batches(h.run.ID) {
				calls += b.Calls
				if b.Status != models.BatchPending {
					t.Errorf("batch %d is %s, want pending", b.ID, b.Status)
				}
			}
			if calls != 1 {
				t.Errorf("the run's batches count %d calls, want the unit's answered call on its pending batch", calls)
			}
		})
		t.Run("run goes on", func(t *testing.T) {
			h := startHeld(t, env, 30, noScores)
			h.takeOver("")
			got := h.env.waitFinished(h.run.ID, 60*time.Second)
			if !got.Finished() || got.Status == models.RunFailed {
				t.Fatalf("run %s (%s), want it finished", got.Status, got.Error)
			}
			h.wantBilled(t, got, h.fj.Total())
		})
	})
}

// TestLateFailureStoreCountsItsPaidCalls: the last retry of a unit fails
// after its worker lost the run. Its failure is not stored (the batch is
// left for the run's holder), but the calls of it that went out are
// counted, once: a second store of the same failure (a retry) adds
// nothing, and the holder's answer that replays a paid call counted so
// does not count it again.
func TestLateFailureStoreCountsItsPaidCalls(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		r, err := New(Config{DB: env.db, Log: testLog()})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		run, bs := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 1)
		if ok, err := env.db.ClaimRun(ctx, run.ID, "new", time.Minute); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		call := func(id string, prompt, completion int, replayed bool) models.PaidCall {
			return models.PaidCall{ID: id, PromptTokens: prompt, CompletionTokens: completion, Cost: Cost(run.JudgeSnapshot, prompt, completion), Replayed: replayed}
		}
		// An answer without scores (paid), then a repair that failed after
		// it was sent, billed.
		b := bs[0]
		b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens = models.BatchFailed, 2, 2, 1070, 103
		failed := models.BatchResult{Batch: b, Cost: Cost(run.JudgeSnapshot, 1070, 103),
			Paid: []models.PaidCall{call("answered", 1000, 100, false), call("repair", 70, 3, false)}}
		failed.Scores = []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1}}
		old := models.WithLeaseOwner(ctx, "old")
		for range 2 {
			if err := r.store(old, run, failed, nil); err == nil {
				t.Fatal("a late failure's store returned no error: its worker must stop")
			}
		}
		got := env.getRun(run.ID)
		if got.Calls != 2 || got.PromptTokens != 1070 || got.CompletionTokens != 103 {
			t.Errorf("run counts %d calls, %d+%d tokens; want the late failure's 2 calls, 1070+103, once", got.Calls, got.PromptTokens, got.CompletionTokens)
		}
		if pb := env.batches(run.ID)[0]; pb.Status != models.BatchPending || pb.Calls != 2 {
			t.Errorf("batch %s with %d calls, want pending (for the holder) with the 2 calls counted", pb.Status, pb.Calls)
		}
		// The holder's answer replays the paid answer (its unit started
		// before the count) and makes a repair of its own.
		b = bs[0]
		b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens = models.BatchDone, 2, 2, 1500, 150
		score := 3.0
		answer := models.BatchResult{Batch: b, Cost: Cost(run.JudgeSnapshot, 1500, 150),
			Paid:   []models.PaidCall{call("answered", 1000, 100, true), call("repair-2", 500, 50, false)},
			Scores: []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &score}}}
		if err := r.store(models.WithLeaseOwner(ctx, "new"), run, answer, nil); err != nil {
			t.Fatal(err)
		}
		r.flushSaves(ctx)
		got = env.getRun(run.ID)
		if got.Calls != 3 || got.PromptTokens != 1570 || got.CompletionTokens != 153 {
			t.Errorf("run counts %d calls, %d+%d tokens; want 3 calls, 1570+153 (the replayed answer counted once)", got.Calls, got.PromptTokens, got.CompletionTokens)
		}
		want := (1570*1 + 153*2) / 1e6
		if got.CostUSD == nil || math.Abs(*got.CostUSD-want) > 1e-12 {
			t.Errorf("run cost %v, want %g", orNilCost(got.CostUSD), want)
		}
		if got.BatchesDone != 1 || got.MissingScores != 0 {
			t.Errorf("run counts %d done, %d missing; want the holder's answer stored", got.BatchesDone, got.MissingScores)
		}
		// The late failure's count, written again after the answer (a
		// retry): nothing more.
		if err := r.store(old, run, failed, nil); err == nil {
			t.Fatal("a late failure's store returned no error")
		}
		if again := env.getRun(run.ID); again.Calls != got.Calls || again.PromptTokens != got.PromptTokens {
			t.Errorf("run counts %d calls, %d tokens after the late failure was counted again; want %d, %d", again.Calls, again.PromptTokens, got.Calls, got.PromptTokens)
		}
		if evs := env.lateEvents(run.ID); len(evs) != 0 {
			t.Errorf("late-count events %+v on a run still going, want none", evs)
		}
	})
}

// TestAnswerAfterCancelHasLateCount: a run is cancelled (as the run page
// and the API cancel it) while its worker's judge call is out. The worker
// still holds the run (a cancel keeps the lease), so the answer that comes
// back is stored, with its calls, tokens, cost and scores, after the run
// ended: a report downloaded right after the cancel shows less than one
// downloaded a moment later. The run's events say so, once (kind
// late_count), by how many calls and tokens (regression: the holder's
// answer changed the cancelled run's figures with no event). A run that
// finishes normally has no late count.
func TestAnswerAfterCancelHasLateCount(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		t.Run("cancelled while the call is out", func(t *testing.T) {
			h := startHeld(t, env, 30, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
				serveBilled(t, h.fj, h.bill, w, r)
			})
			cancelled, err := h.r.Cancel(context.Background(), h.env.ws.ID, h.run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cancelled.Status != models.RunCancelled || cancelled.FinishedAt == nil || cancelled.Calls != 0 {
				t.Fatalf("run %s finished at %v with %d calls after the cancel, want cancelled with none", cancelled.Status, cancelled.FinishedAt, cancelled.Calls)
			}
			close(h.go_)
			h.env.waitRun(h.run.ID, 15*time.Second, "counting the call that came back after the cancel", func(r models.Run) bool { return r.Calls > 0 })
			time.Sleep(300 * time.Millisecond) // anything counted twice would be by now
			got := h.env.getRun(h.run.ID)
			if got.Status != models.RunCancelled {
				t.Fatalf("run %s, want its cancel to stand", got.Status)
			}
			if n := h.fj.Total(); n != 1 {
				t.Errorf("the judge was sent %d calls, want the held one only", n)
			}
			h.wantBilled(t, got, 1)
			evs := h.env.lateEvents(h.run.ID)
			if len(evs) != 1 {
				t.Fatalf("%d late-count events, want 1: the answer changed the cancelled run's figures", len(evs))
			}
			tokens := fmt.Sprintf("1 call, %d prompt and %d completion tokens", got.PromptTokens, got.CompletionTokens)
			if !strings.Contains(evs[0].Message, tokens) || !strings.Contains(evs[0].Message, "cancelled") || evs[0].Worker == "" || evs[0].At.Before(*cancelled.FinishedAt) {
				t.Errorf("late-count event %+v: want it to say that %s came back after the run was cancelled, by which worker, and when", evs[0], tokens)
			}
		})
		t.Run("finished normally", func(t *testing.T) {
			h := startHeld(t, env, 30, func(w http.ResponseWriter, r *http.Request, h *heldRun) {
				serveBilled(t, h.fj, h.bill, w, r)
			})
			close(h.go_)
			got := h.env.waitFinished(h.run.ID, 60*time.Second)
			if got.Status != models.RunSucceeded {
				t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
			}
			h.wantBilled(t, got, h.fj.Total())
			if evs := h.env.lateEvents(h.run.ID); len(evs) != 0 {
				t.Errorf("late-count events %+v on a run that finished normally, want none", evs)
			}
		})
	})
}

// TestStepsCallAfterCancelHasLateCount: a G-Eval run is cancelled while
// the call writing its evaluation steps (the method's set-up call, before
// any sample is judged) is out. That call comes back after the cancel and
// is counted on the run (calls, tokens, cost): the run's events say so,
// once (regression: the steps call changed the cancelled run's figures
// with no event).
func TestStepsCallAfterCancelHasLateCount(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var held atomic.Bool
		out, release := make(chan struct{}), make(chan struct{})
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if held.CompareAndSwap(false, true) {
				close(out)
				select {
				case <-release:
				case <-fj.release:
					return true
				}
			}
			return false // the simulated judge answers
		})
		r := env.startRunner(Config{LeaseTTL: 2 * time.Second})
		t.Cleanup(fj.releaseHeld)
		run := env.newRun(fj.URL(), 1, 1, 30)
		run.Method = string(evaluator.MethodGEval)
		run.MethodSettings = evaluator.MethodSettings{Samples: 1, SampleTemperature: 1}
		run = env.launch(r, run)
		select {
		case <-out:
		case <-time.After(15 * time.Second):
			t.Fatal("the run sent no call")
		}
		cancelled, err := r.Cancel(context.Background(), env.ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cancelled.Status != models.RunCancelled || cancelled.Calls != 0 {
			t.Fatalf("run %s with %d calls after the cancel, want cancelled with none", cancelled.Status, cancelled.Calls)
		}
		close(release)
		env.waitRun(run.ID, 15*time.Second, "counting the steps call that came back after the cancel", func(r models.Run) bool { return r.Calls > 0 })
		time.Sleep(300 * time.Millisecond) // anything counted twice would be by now
		got := env.getRun(run.ID)
		if got.Status != models.RunCancelled || got.Calls != 1 || got.PromptTokens == 0 {
			t.Fatalf("run %s with %d calls, %d prompt tokens; want cancelled, with the steps call counted", got.Status, got.Calls, got.PromptTokens)
		}
		if n := fj.Total(); n != 1 {
			t.Errorf("the judge was sent %d calls, want the steps call only", n)
		}
		evs := env.lateEvents(run.ID)
		if len(evs) != 1 {
			t.Fatalf("%d late-count events, want 1: the steps call changed the cancelled run's figures", len(evs))
		}
		// newRun's prices: $1 and $2 per million.
		cost := money.Text((float64(got.PromptTokens)*1 + float64(got.CompletionTokens)*2) / 1e6)
		words := fmt.Sprintf("1 call, %d prompt and %d completion tokens, %s.", got.PromptTokens, got.CompletionTokens, cost)
		if msg := evs[0].Message; !strings.Contains(msg, "G-Eval's evaluation steps") || !strings.Contains(msg, "still out when the run was cancelled") ||
			!strings.Contains(msg, words) || evs[0].Worker == "" {
			t.Errorf("late-count event %+v: want it to say that the steps call, %s, came back after the run was cancelled, and by which worker", evs[0], words)
		}
	})
}
