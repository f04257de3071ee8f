package runner

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// probeRouter sends the breaker's probes through probes and every other
// request through calls, counting the probes it is handed.
type probeRouter struct {
	probes, calls http.RoundTripper
	tried         atomic.Int64
}

func (p *probeRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if strings.Contains(string(body), "Reply with the single word OK.") {
		p.tried.Add(1)
		return p.probes.RoundTrip(req)
	}
	return p.calls.RoundTrip(req)
}

// TestProbesCountedWhenSent: the run counts exactly the probes that were
// sent. A probe the network policy refused before sending it cost nothing
// and was counted as a call; one sent and then cut short because the
// execution ended (it may be billed) was not counted.
func TestProbesCountedWhenSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// refused: the egress policy refuses the probe's connection;
		// otherwise the judge holds the probe until the execution ends.
		refused   bool
		wantProbe int
	}{
		{name: "refused before sending", refused: true, wantProbe: 0},
		{name: "sent, then cancelled", refused: false, wantProbe: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				router := &probeRouter{probes: http.DefaultTransport, calls: http.DefaultTransport}
				if tc.refused {
					router.probes = judge.Egress{}.Transport(0, nil) // loopback refused
				}
				run, held, cancel := probing(t, env, router)
				if tc.refused {
					env.waitRun(run.ID, 10*time.Second, "a probe refused", func(models.Run) bool { return router.tried.Load() > 0 })
				} else {
					select {
					case <-held:
					case <-time.After(10 * time.Second):
						t.Fatal("no probe reached the judge")
					}
					cancel() // the execution ends while the probe is out
				}
				// The breaker closes (the refusal reads as an answer; the
				// execution ended) once the probe is counted or not.
				got := env.waitRun(run.ID, 10*time.Second, "the run no longer waiting", func(r models.Run) bool { return r.WaitingSince == nil })
				if got.ProbeCalls != tc.wantProbe {
					t.Errorf("the run counts %d probe calls, want %d", got.ProbeCalls, tc.wantProbe)
				}
			})
		})
	}
}

// TestProbeAfterCancelHasLateCount: a run is cancelled while a probe of
// its breaker is out (its judge stopped answering). The probe was sent, so
// it is counted among the run's probes after the run ended: the run's
// events say so, once (regression: the probe changed the cancelled run's
// figures with no event).
func TestProbeAfterCancelHasLateCount(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		run, held, cancel := probing(t, env, nil)
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("no probe reached the judge")
		}
		if _, err := env.db.RequestCancel(context.Background(), env.ws.ID, run.ID); err != nil {
			t.Fatal(err)
		}
		cancel() // the cancel ends the execution while the probe is out
		got := env.waitRun(run.ID, 10*time.Second, "the probe counted", func(r models.Run) bool { return r.ProbeCalls > 0 })
		time.Sleep(200 * time.Millisecond) // anything counted twice would be by now
		if got = env.getRun(run.ID); got.Status != models.RunCancelled || got.ProbeCalls != 1 {
			t.Fatalf("run %s with %d probes, want cancelled with the probe counted", got.Status, got.ProbeCalls)
		}
		evs := env.lateEvents(run.ID)
		if len(evs) != 1 {
			t.Fatalf("%d late-count events, want 1: the probe changed the cancelled run's figures", len(evs))
		}
		if msg := evs[0].Message; !strings.Contains(msg, "A probe of the judge") || !strings.Contains(msg, "after the run ended") || !strings.Contains(msg, "added to the run's probes: 1 probe") {
			t.Errorf("late-count event %q: want it to say that a probe was counted after the run ended", msg)
		}
	})
}

// probing opens the breaker of an execution of a new run whose judge is
// down: its calls fail, and it holds each probe until the execution ends.
// held is closed when the first probe reaches the judge; cancel ends the
// execution. router, when not nil, carries the execution's requests.
func probing(t *testing.T, env *testEnv, router *probeRouter) (run models.Run, held <-chan struct{}, cancel context.CancelFunc) {
	t.Helper()
	arrived := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "Reply with the single word OK.") {
			once.Do(func() { close(arrived) })
			<-r.Context().Done()
			return
		}
		writeAPIError(w, http.StatusServiceUnavailable, nil, "upstream down")
	}))
	t.Cleanup(srv.Close)
	run = env.newRun(srv.URL+"/v1", 1, 1, 30)
	if err := env.db.CreateRun(context.Background(), &run, nil); err != nil {
		t.Fatal(err)
	}
	r := &Runner{log: testLog(), draining: make(chan struct{}), metrics: newMetrics(nil, testLog()), db: env.db,
		cfg: Config{Breaker: BreakerConfig{Threshold: 3, ProbeInterval: 10 * time.Millisecond}}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	jc := judge.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 1}
	if router != nil {
		jc.HTTPClient = &http.Client{Transport: router}
	}
	client, err := judge.New(r.guardJudge(ctx, run, jc, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	// Three failures open the breaker; its probes begin.
	for range 3 {
		if _, err := client.Complete(ctx, judge.Request{Messages: []evaluator.Message{{Role: "user", Content: "hi"}}}); err == nil {
			t.Fatal("the judge that is down answered")
		}
	}
	return run, arrived, cancel
}
