package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestRunPageAndAPIShowLostLeases: the events a worker records when it
// loses its lease on a run, and when another takes the run over, are on
// the run page (escaped: a worker's error text is untrusted) and in
// GET /api/v1/runs/{id}, oldest first. Before, nothing told reviewers why
// a run's progress had a gap.
func TestRunPageAndAPIShowLostLeases(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		ctx := t.Context()
		rec := env.get(fmt.Sprintf("/api/v1/runs/%d", runID))
		got := decode[map[string]any](t, rec, http.StatusOK)
		if evs, ok := got["events"].([]any); !ok || len(evs) != 0 {
			t.Fatalf("events of a run nothing happened to: %#v, want []", got["events"])
		}
		if body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String(); strings.Contains(body, `data-testid="run-events"`) {
			t.Error("the run page lists worker events for a run that had none")
		}

		lostAt := time.Date(2026, 3, 4, 10, 0, 2, 0, time.UTC)
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt.Add(3 * time.Second), Kind: models.RunEventTakenOver,
			Worker: "host-b/1", Message: "Worker host-b took the run over at 2026-03-04 10:00:05 UTC from worker host-a."}))
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt, Kind: models.RunEventLeaseLost,
			Worker: "host-a/3", Message: "Worker host-a lost its lease on the run at 2026-03-04 10:00:02 UTC: <b>db down</b>."}))

		rec = env.get(fmt.Sprintf("/api/v1/runs/%d", runID))
		type apiEvents struct {
			Events []APIRunEvent `json:"events"`
		}
		run := decode[apiEvents](t, rec, http.StatusOK)
		if len(run.Events) != 2 || run.Events[0].Kind != models.RunEventLeaseLost || run.Events[0].Worker != "host-a/3" ||
			!run.Events[0].At.Time().Equal(lostAt) || run.Events[1].Kind != models.RunEventTakenOver {
			t.Fatalf("API events %+v; want the lost lease (host-a/3 at %s), then the takeover", run.Events, lostAt)
		}

		body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
		i := strings.Index(body, "Worker host-a lost its lease on the run: &lt;b&gt;db down&lt;/b&gt;.")
		j := strings.Index(body, "Worker host-b took the run over from worker host-a.")
		if i < 0 || j < 0 || j < i {
			t.Errorf("the run page does not list the lost lease, then the takeover, escaped (at %d and %d)", i, j)
		}
		if strings.Contains(body, "<b>db down</b>") {
			t.Error("the run page shows an event's text unescaped")
		}
		// The runs list is not burdened with them.
		if list := env.get("/api/v1/runs").Body.String(); strings.Contains(list, `"events"`) {
			t.Error("the runs list carries events; only a run's own GET should")
		}
	})
}

// TestRunEventTimeShownOnce: the Run history card (once "Workers") showed an event's time and
// then its message, which says the same time again ("10:00:02 UTC: Worker
// w lost its lease on the run at 2026-03-04 10:00:02 UTC: ..."). The card
// now says the time once, before the message; the API's events[].message
// stays self-contained, with its time, as the runner wrote it.
func TestRunEventTimeShownOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		ctx := t.Context()
		lostAt := time.Date(2026, 3, 4, 10, 0, 2, 0, time.UTC)
		tookAt := lostAt.Add(9 * time.Second)
		// As runner.noteLeaseLost and runner.noteTakeover word them.
		lost := "Worker host-a lost its lease on the run at 2026-03-04 10:00:02 UTC: its renewal was held up past the lease. It sent no new calls from then on."
		took := "Worker host-b took the run over at 2026-03-04 10:00:11 UTC from worker host-a (its lease had run out by 2026-03-04 10:00:08 UTC). Batches already answered were not sent again."
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt, Kind: models.RunEventLeaseLost, Worker: "host-a/3", Message: lost}))
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: tookAt, Kind: models.RunEventTakenOver, Worker: "host-b/1", Message: took}))

		body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
		for _, want := range []string{
			`<time datetime="2026-03-04T10:00:02Z">2026-03-04 10:00:02 UTC</time>: Worker host-a lost its lease on the run: its renewal was held up past the lease.`,
			`<time datetime="2026-03-04T10:00:11Z">2026-03-04 10:00:11 UTC</time>: Worker host-b took the run over from worker host-a (its lease had run out by 2026-03-04 10:00:08 UTC).`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the Run history card does not say, once:\n%s", want)
			}
		}
		// The card lists more than workers' leases (requeues, re-sent
		// calls, late counts): it is headed for what it holds.
		if !strings.Contains(body, "<h2>Run history</h2>") || strings.Contains(body, "<h2>Workers</h2>") {
			t.Errorf("the run events card is not headed \"Run history\"")
		}
		for _, at := range []string{"2026-03-04 10:00:02 UTC", "2026-03-04 10:00:11 UTC"} {
			if n := strings.Count(body, at); n != 1 {
				t.Errorf("the run page says %q %d times, want once", at, n)
			}
		}

		type apiEvents struct {
			Events []APIRunEvent `json:"events"`
		}
		run := decode[apiEvents](t, env.get(fmt.Sprintf("/api/v1/runs/%d", runID)), http.StatusOK)
		if len(run.Events) != 2 || run.Events[0].Message != lost || run.Events[1].Message != took {
			t.Errorf("API events %+v; want the messages as stored, each with its time", run.Events)
		}
	})
}
