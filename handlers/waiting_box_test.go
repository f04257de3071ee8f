package handlers

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/static"
)

// The judge's error and what to do about it are on the page of every
// active run, hidden until it waits for its judge, and app.js shows them
// when the progress events say it waits: the launch lands on the run's
// page before the judge is found down, and the page (kept current by the
// events, not reloaded) showed only the badge "waiting for judge".
func TestWaitingHelpShowsWithoutReload(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		box := regexp.MustCompile(`<div data-waiting-box data-testid="waiting-box"( hidden)?>`)
		for _, tc := range []struct {
			name, waitingError string
			wantHidden         bool
		}{
			{"running", "", true},
			{"waiting for judge", "judge: could not reach the endpoint", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var since any
				if tc.waitingError != "" {
					since = time.Now().UTC()
				}
				must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = ? WHERE id = ?`,
					models.RunRunning, since, tc.waitingError, runID).Error)
				body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
				m := box.FindStringSubmatch(body)
				if m == nil {
					t.Fatal("the active run's page has no waiting box")
				}
				if hidden := m[1] != ""; hidden != tc.wantHidden {
					t.Errorf("waiting box hidden %v, want %v", hidden, tc.wantHidden)
				}
				i := strings.Index(body, m[0])
				inside := body[i : i+strings.Index(body[i:], "</div>")]
				for _, want := range []string{`data-field="waiting"`, `data-testid="waiting-help"`} {
					if !strings.Contains(inside, want) {
						t.Errorf("the waiting box lacks %s", want)
					}
				}
			})
		}
		js, err := fs.ReadFile(static.FS, "app.js")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(js), `el.querySelector("[data-waiting-box]")`) || !strings.Contains(string(js), "wait.hidden = !d.waiting") {
			t.Error("app.js does not show the waiting box from the progress events")
		}
	})
}
