package handlers

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRunSaysItIsArchived: an archived run is left out of the API's run
// list but opens by its id, and its answer gave no sign that it was
// archived (its page says so). It carries archived_at now: when it was
// archived, null before and after unarchiving, checked against the
// document.
func TestAPIRunSaysItIsArchived(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 60*time.Second)
		a := newAPIClient(t, env)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		_, tok := env.apiToken(env.ws.ID, viewer.ID)
		editor := env.sessionCookie(env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor))
		path := fmt.Sprintf("/api/v1/runs/%d", runID)
		listed := func() bool {
			page := decode[Page[APIRun]](t, a.get("/api/v1/runs?limit=200", tok), http.StatusOK)
			for _, r := range page.Items {
				if r.ID == runID {
					return true
				}
			}
			return false
		}
		if r := decode[APIRun](t, a.get(path, tok), http.StatusOK); r.ArchivedAt != nil || !listed() {
			t.Fatalf("a run not archived: archived_at %v, listed %v; want null and listed", r.ArchivedAt, listed())
		}
		before := time.Now().Add(-time.Second)
		if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/archive", runID), nil, "", editor); rec.Code != http.StatusSeeOther {
			t.Fatalf("archive: %d", rec.Code)
		}
		r := decode[APIRun](t, a.get(path, tok), http.StatusOK)
		if r.ArchivedAt == nil || r.ArchivedAt.Time().Before(before) || listed() {
			t.Errorf("an archived run: archived_at %v, listed %v; want a time after %v, and not listed", r.ArchivedAt, listed(), before)
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/unarchive", runID), nil, "", editor); rec.Code != http.StatusSeeOther {
			t.Fatalf("unarchive: %d", rec.Code)
		}
		if r := decode[APIRun](t, a.get(path, tok), http.StatusOK); r.ArchivedAt != nil || !listed() {
			t.Errorf("a run unarchived: archived_at %v, listed %v; want null and listed", r.ArchivedAt, listed())
		}
	})
}
