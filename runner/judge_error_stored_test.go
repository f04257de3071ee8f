package runner

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestJudgeErrorsStoredWithoutCodePrefix: what the runner stores when its
// judge fails (a batch's error, a failed repair's problem, the message of
// a run waiting for its rate-limited or unreachable judge, the run's own
// error) is the plain sentence a user reads. The judge client's errors
// opened with the code path "judge: ", so every one of them was stored
// as "judge: the endpoint ..." ("repair request failed: judge: ...") and
// only the pages hid it. The columns themselves are read here, not the
// shown text.
func TestJudgeErrorsStoredWithoutCodePrefix(t *testing.T) {
	t.Parallel()
	// stored reads the run's error and waiting message, and its batches'
	// errors and problems, as the database holds them.
	type storedRun struct{ runError, waiting, batchErrors, problems string }
	stored := func(t *testing.T, env *testEnv, runID int64) storedRun {
		t.Helper()
		var s storedRun
		if err := env.db.Gorm.Raw(`SELECT error, waiting_error FROM runs WHERE id = ?`, runID).Row().Scan(&s.runError, &s.waiting); err != nil {
			t.Fatal(err)
		}
		rows, err := env.db.Gorm.Raw(`SELECT error, problems FROM run_batches WHERE run_id = ? ORDER BY id`, runID).Rows()
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var errs, probs []string
		for rows.Next() {
			var e, p string
			if err := rows.Scan(&e, &p); err != nil {
				t.Fatal(err)
			}
			errs, probs = append(errs, e), append(probs, p)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		s.batchErrors, s.problems = strings.Join(errs, "\n"), strings.Join(probs, "\n")
		return s
	}
	noPrefix := func(t *testing.T, s storedRun) {
		t.Helper()
		for name, text := range map[string]string{"run error": s.runError, "waiting error": s.waiting,
			"batch errors": s.batchErrors, "batch problems": s.problems} {
			if strings.Contains(text, "judge: ") {
				t.Errorf("stored %s %q carries the code-path prefix \"judge: \"", name, text)
			}
		}
	}
	// runOn runs one round on a judge answering through f until the run
	// is what cond says (what), and gives what it stored, checked for
	// the prefix.
	runOn := func(t *testing.T, env *testEnv, cfg Config, f fault, what string, cond func(models.Run) bool) storedRun {
		t.Helper()
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, f)
		run := env.launch(env.startRunner(cfg), env.newRun(fj.URL(), 1, 3, 30))
		env.waitRun(run.ID, 30*time.Second, what, cond)
		s := stored(t, env, run.ID)
		noPrefix(t, s)
		return s
	}
	noScores := readTestdata(t, "answer_no_scores.txt")

	t.Run("failed repair and failed batch", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			// The first batch seen is refused; every other answer lacks
			// its scores, and every repair is refused.
			tg := &target{}
			s := runOn(t, env, Config{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				if c.Repair || tg.is(c) {
					writeAPIError(w, http.StatusUnprocessableEntity, nil, "unsupported parameter")
				} else {
					writeCompletion(w, noScores)
				}
				return true
			}, "finished", models.Run.Finished)
			const refused = "the endpoint rejected the request (HTTP 422)"
			if !strings.Contains(s.problems, "repair request failed: "+refused) {
				t.Errorf("stored problems %q do not quote the refused repair as %q", s.problems, "repair request failed: "+refused)
			}
			failed := 0
			for _, e := range strings.Split(s.batchErrors, "\n") {
				if e == "" {
					continue
				}
				failed++
				if !strings.HasPrefix(e, refused) {
					t.Errorf("stored batch error %q, want it to open with %q", e, refused)
				}
			}
			if failed == 0 {
				t.Errorf("no batch stored an error; the refused batch should have")
			}
		})
	})

	// A judge that refuses every call for a while: the run waits for it,
	// and says why in its waiting message.
	waits := []struct {
		name   string
		status int
		header map[string]string
		cfg    Config
		want   string // how the stored waiting message opens
	}{
		// Above the client's 120s ceiling: the run is put aside.
		{"rate-limited run waits", http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, Config{},
			"the endpoint is rate limiting (HTTP 429). The run waits 5m0s"},
		{"unreachable judge: run waits", http.StatusServiceUnavailable, nil,
			Config{Breaker: BreakerConfig{Threshold: 2, ProbeInterval: time.Hour},
				JudgeTuning: JudgeTuning{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}},
			"the endpoint failed (HTTP 503)"},
	}
	for _, tc := range waits {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				s := runOn(t, env, tc.cfg, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					writeAPIError(w, tc.status, tc.header, "not now")
					return true
				}, "waiting for its judge", models.Run.WaitingForJudge)
				if !strings.HasPrefix(s.waiting, tc.want) {
					t.Errorf("stored waiting error %q, want it to open with %q", s.waiting, tc.want)
				}
			})
		})
	}

	t.Run("judge refuses the key: run fails", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			s := runOn(t, env, Config{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				writeAPIError(w, http.StatusUnauthorized, nil, "Incorrect API key provided")
				return true
			}, "finished", models.Run.Finished)
			if want := models.JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401)"; !strings.HasPrefix(s.runError, want) {
				t.Errorf("stored run error %q, want it to open with %q", s.runError, want)
			}
		})
	})
}
