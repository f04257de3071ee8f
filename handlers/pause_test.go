package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPauseAndContinueFromPage: a running run's page offers Pause beside
// Cancel and says which one ends the run; pausing shows the run as paused
// (page, list, its filter, JSON) with Continue instead of Pause; continuing
// queues it and it ends; a cancelled run offers no Continue and refuses one
// with why.
func TestPauseAndContinueFromPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		runPath := fmt.Sprintf("/runs/%d", runID)
		// A run still going (its worker has left: nothing moves it meanwhile).
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, runID).Error)

		body := env.get(runPath).Body.String()
		for _, want := range []string{`data-testid="pause"`, `data-testid="cancel"`, "Cancel ends the run; Pause keeps it."} {
			if !strings.Contains(body, want) {
				t.Errorf("a running run's page lacks %s", want)
			}
		}
		if strings.Contains(body, `data-testid="continue"`) {
			t.Errorf("a running run's page offers Continue")
		}

		steps := []struct {
			name, path, wantFlash, wantStatus string
		}{
			{"pause the running run", "/pause", "ok:", models.RunPaused},
			{"pause it again", "/pause", "error:", models.RunPaused},
		}
		for _, s := range steps {
			rec := env.postForm(runPath+s.path, nil)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != runPath {
				t.Errorf("%s: status %d to %q, want 303 to %s", s.name, rec.Code, rec.Header().Get("Location"), runPath)
			}
			if got := rec.Header().Get("Set-Cookie"); !strings.Contains(got, s.wantFlash) {
				t.Errorf("%s: flash cookie %q, want kind %s", s.name, got, s.wantFlash)
			}
			if run, _ := env.db.GetRun(env.localCtx(), runID); run.Status != s.wantStatus {
				t.Errorf("%s: run is %s, want %s", s.name, run.Status, s.wantStatus)
			}
		}

		body = env.get(runPath).Body.String()
		for _, want := range []string{`data-testid="run-paused"`, `data-testid="continue"`, `>paused</span>`, `data-testid="partial-paused"`} {
			if !strings.Contains(body, want) {
				t.Errorf("a paused run's page lacks %s", want)
			}
		}
		if strings.Contains(body, `data-testid="pause"`) {
			t.Errorf("a paused run's page offers Pause")
		}
		if list := env.get("/runs?status=paused").Body.String(); !strings.Contains(list, runPath) || !strings.Contains(list, `badge paused`) {
			t.Errorf("the runs list filtered on paused does not show the run with a paused badge")
		}
		if rec := env.get(fmt.Sprintf("/api/v1/runs/%d", runID)); !strings.Contains(rec.Body.String(), `"status":"paused"`) || !strings.Contains(rec.Body.String(), `"finished":false`) {
			t.Errorf("the API shows the paused run as %s", rec.Body)
		}

		rec := env.postForm(runPath+"/continue", nil)
		if got := rec.Header().Get("Set-Cookie"); rec.Code != http.StatusSeeOther || !strings.Contains(got, "ok:") {
			t.Fatalf("continue: status %d, flash %q", rec.Code, got)
		}
		if run := env.waitRun(runID, 30*time.Second); run.Status != models.RunSucceeded {
			t.Errorf("continued run ended %s (%s), want succeeded", run.Status, run.Error)
		}

		// Cancelling is final.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunPaused, runID).Error)
		if rec := env.postForm(runPath+"/cancel", nil); !strings.Contains(rec.Header().Get("Set-Cookie"), "ok:") {
			t.Fatalf("cancelling a paused run: flash %q", rec.Header().Get("Set-Cookie"))
		}
		if body := env.get(runPath).Body.String(); strings.Contains(body, `data-testid="continue"`) || strings.Contains(body, `data-testid="pause"`) {
			t.Errorf("a cancelled run's page offers Continue or Pause")
		}
		rec = env.do(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/continue", runID), nil, "")
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "cancelling is final") {
			t.Errorf("continuing a cancelled run = %d %s, want 409 saying cancelling is final", rec.Code, rec.Body)
		}
	})
}
