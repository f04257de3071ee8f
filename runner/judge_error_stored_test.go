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
	noScores := readTestdata(t, "answer_no_scores.txt")

	t.Run("failed repair and failed batch", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			// The first batch seen is refused; every other answer lacks
			// its scores, and every repair is refused.
			tg := &target{}
			fj := newFakeJudge(t, simjudge.Options{Seed: 5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				if c.Repair || tg.is(c) {
					writeAPIError(w, http.StatusUnprocessableEntity, nil, "unsupported parameter")
				} else {
					writeCompletion(w, noScores)
				}
				return true
			})
			r := env.startRunner(Config{})
			run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
			env.waitFinished(run.ID, 30*time.Second)
			s := stored(t, env, run.ID)
			noPrefix(t, s)
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

	t.Run("rate-limited run waits", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			fj := newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				// Above the client's 120s ceiling: the run is put aside.
				writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, "quota exceeded")
				return true
			})
			r := env.startRunner(Config{})
			run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
			env.waitRun(run.ID, 15*time.Second, "waiting for its judge", models.Run.WaitingForJudge)
			s := stored(t, env, run.ID)
			noPrefix(t, s)
			if want := "the endpoint is rate limiting (HTTP 429). The run waits 5m0s"; !strings.HasPrefix(s.waiting, want) {
				t.Errorf("stored waiting error %q, want it to open with %q", s.waiting, want)
			}
		})
	})

	t.Run("unreachable judge: run waits", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			fj := newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				writeAPIError(w, http.StatusServiceUnavailable, nil, "upstream down")
				return true
			})
			r := env.startRunner(Config{Breaker: BreakerConfig{Threshold: 2, ProbeInterval: time.Hour},
				JudgeTuning: JudgeTuning{MaxAttempts: 2, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}})
			run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
			env.waitRun(run.ID, 15*time.Second, "waiting for its judge", models.Run.WaitingForJudge)
			s := stored(t, env, run.ID)
			noPrefix(t, s)
			if want := "the endpoint failed (HTTP 503)"; !strings.HasPrefix(s.waiting, want) {
				t.Errorf("stored waiting error %q, want it to open with %q", s.waiting, want)
			}
		})
	})

	t.Run("judge refuses the key: run fails", func(t *testing.T) {
		t.Parallel()
		eachDB(t, func(t *testing.T, env *testEnv) {
			fj := newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
				writeAPIError(w, http.StatusUnauthorized, nil, "Incorrect API key provided")
				return true
			})
			r := env.startRunner(Config{})
			run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
			env.waitFinished(run.ID, 20*time.Second)
			s := stored(t, env, run.ID)
			noPrefix(t, s)
			if want := models.JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401)"; !strings.HasPrefix(s.runError, want) {
				t.Errorf("stored run error %q, want it to open with %q", s.runError, want)
			}
		})
	})
}
