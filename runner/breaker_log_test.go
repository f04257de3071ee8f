package runner

import (
	"bytes"
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

// lockedBuffer is a log's output written by concurrent goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBreakerLogSaysARefusingJudgeStopsTheRun: a judge that stops
// answering (500s) opens the breaker; when it comes back answering 401 to
// the probe, the log said "judge answers again: run goes on", and the run
// failed at its next call on the 401. The log now says the judge refuses
// the run's calls and the run stops, which it then does; a judge that
// comes back answering still says the run goes on.
func TestBreakerLogSaysARefusingJudgeStopsTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		backStatus int // what the judge answers once back; 0: it scores
		wantLog    string
		notLog     string
		wantStatus string
	}{
		{"back with 401", http.StatusUnauthorized, "judge answers again but refuses the run's calls: run stops", "judge answers again: run goes on", models.RunFailed},
		{"back and scoring", 0, "judge answers again: run goes on", "run stops", models.RunSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				var back atomic.Bool
				fj := newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					switch {
					case c.Total == 1:
						return false // the first call is answered
					case !back.Load():
						writeAPIError(w, http.StatusInternalServerError, nil, "down")
						return true
					case tc.backStatus != 0:
						writeAPIError(w, tc.backStatus, nil, "invalid api key")
						return true
					}
					return false
				})
				var logged lockedBuffer
				log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
				r := env.startRunner(Config{Log: log, LeaseTTL: leaseTTL, Breaker: BreakerConfig{Threshold: 3, ProbeInterval: 50 * time.Millisecond}})
				run := env.launch(r, env.newRun(fj.URL(), 3, 1, 5))
				env.waitRun(run.ID, 15*time.Second, "waiting for judge", models.Run.WaitingForJudge)
				back.Store(true)
				run = env.waitFinished(run.ID, 20*time.Second)
				out := logged.String()
				if !strings.Contains(out, tc.wantLog) {
					t.Errorf("the log does not say %q:\n%s", tc.wantLog, out)
				}
				if strings.Contains(out, tc.notLog) {
					t.Errorf("the log says %q:\n%s", tc.notLog, out)
				}
				if run.Status != tc.wantStatus {
					t.Errorf("run %s (error %q), want %s", run.Status, run.Error, tc.wantStatus)
				}
				if tc.backStatus != 0 && !strings.Contains(out, "401") {
					t.Errorf("the log does not give the judge's refusal (401):\n%s", out)
				}
			})
		})
	}
}
