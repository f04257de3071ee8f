package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPIRetriedStateChangeSucceeds: a client whose first cancel, pause
// or continue was carried out but whose answer was lost sends it again.
// A request for the state the run is already in answers 200 with the run
// and changes nothing (one audit line, the run as it was); a transition
// that cannot be made (continuing or pausing a cancelled run, continuing
// with another spending cap than the one in force) stays 409 and says
// why. Retries were answered 409 "already paused", which a script could
// not tell from a refusal.
func TestAPIRetriedStateChangeSucceeds(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		// Runs stored queued with no job: no worker takes them, so their
		// state is only what these requests make it.
		queued := func(name string, capUSD *float64) models.Run {
			s := evaluator.DefaultSettings()
			s.SpendCapUSD = capUSD
			run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID,
				JudgeID: &d.judge.ID, Name: name, Method: models.MethodBatchEval, Status: models.RunQueued, BatchesTotal: 4,
				Settings: s, RubricSnapshot: d.rubric.Evaluator(), JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
			if err := env.db.Gorm.Create(&run).Error; err != nil {
				t.Fatal(err)
			}
			return run
		}
		count := func(action string) int {
			n := 0
			for _, a := range env.auditActions() {
				if a == action {
					n++
				}
			}
			return n
		}
		post := func(run models.Run, action, body string) (int, string, APIRun) {
			var b []byte
			ctype := ""
			if body != "" {
				b, ctype = []byte(body), "application/json"
			}
			rec := a.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/%s", run.ID, action), tok, b, ctype)
			var got APIRun
			if rec.Code == http.StatusOK {
				got = decode[APIRun](t, rec, http.StatusOK)
			}
			return rec.Code, rec.Body.String(), got
		}

		pausedRun := queued("paused twice", nil)
		for i := 1; i <= 2; i++ {
			code, body, got := post(pausedRun, "pause", "")
			if code != http.StatusOK || got.Status != models.RunPaused {
				t.Fatalf("pause %d = %d %.300s, want 200 paused", i, code, body)
			}
		}
		if n := count(models.AuditRunPaused); n != 1 {
			t.Errorf("%d audit lines %q after a pause and its retry, want 1", n, models.AuditRunPaused)
		}
		before, err := env.db.FindRun(t.Context(), env.ws.ID, pausedRun.ID)
		if err != nil {
			t.Fatal(err)
		}
		if before.PausedAt == nil {
			t.Fatal("the paused run has no paused_at")
		}

		// Continued already (queued): the retry is a success with no cap,
		// or with the cap in force; another cap is not dropped silently.
		cap2 := 2.0
		going := queued("continued", &cap2)
		for _, body := range []string{"", `{"spend_cap_usd":2}`} {
			if code, text, got := post(going, "continue", body); code != http.StatusOK || got.Status != models.RunQueued {
				t.Errorf("continue %q of a queued run = %d %.300s, want 200 queued", body, code, text)
			}
		}
		if code, text, _ := post(going, "continue", `{"spend_cap_usd":5}`); code != http.StatusConflict || !strings.Contains(text, "not paused") {
			t.Errorf("continue with another cap of a queued run = %d %.300s, want 409 saying it is not paused", code, text)
		}
		if n := count(models.AuditRunContinued); n != 0 {
			t.Errorf("%d audit lines %q for a run continued by none of these requests, want 0", n, models.AuditRunContinued)
		}

		cancelled := queued("cancelled twice", nil)
		var first APIRun
		for i := 1; i <= 2; i++ {
			code, body, got := post(cancelled, "cancel", "")
			if code != http.StatusOK || got.Status != models.RunCancelled {
				t.Fatalf("cancel %d = %d %.300s, want 200 cancelled", i, code, body)
			}
			if i == 1 {
				first = got
			} else if got.FinishedAt == nil || first.FinishedAt == nil || *got.FinishedAt != *first.FinishedAt {
				t.Errorf("the retried cancel moved the run's end from %v to %v", first.FinishedAt, got.FinishedAt)
			}
		}
		if n := count(models.AuditRunCancelled); n != 1 {
			t.Errorf("%d audit lines %q after a cancel and its retry, want 1", n, models.AuditRunCancelled)
		}
		for _, tc := range []struct{ action, says string }{
			{"continue", "cancelling is final"},
			{"pause", "has already been cancelled"},
		} {
			if code, body, _ := post(cancelled, tc.action, ""); code != http.StatusConflict || !strings.Contains(body, tc.says) {
				t.Errorf("%s a cancelled run = %d %.300s, want 409 saying %q", tc.action, code, body, tc.says)
			}
		}
	})
}
