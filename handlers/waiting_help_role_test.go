package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestWaitingHelpFitsTheRole: a run waiting for its judge told every
// reader to "cancel this run, correct the judge on the Judges page" and
// launch again; only editors may cancel and only owners may change a
// judge. Each role is now told what it can do and whom to ask for the rest.
func TestWaitingHelpFitsTheRole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Waiting", 10)
		run := env.storedRun(d, "Waiting run", noisy(d.human, 0.5, 1), nil)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = ? WHERE id = ?`,
			models.RunRunning, time.Now().UTC(), "could not reach the endpoint", run.ID).Error)
		owner := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		viewer := env.createUser(env.ws.ID, "vic@a.test", models.RoleViewer)
		const ownerWords = "cancel this run, correct the judge on the"
		for _, tc := range []struct {
			name       string
			user       models.User
			want, deny []string
		}{
			{"owner", owner, []string{ownerWords}, []string{"ask an owner"}},
			{"editor", editor, []string{"cancel this run and ask an owner of the workspace to correct the judge", "only owners can change a judge"}, []string{ownerWords}},
			{"viewer", viewer, []string{"ask an editor to cancel this run and an owner of the workspace to correct the judge"}, []string{ownerWords}},
		} {
			rec := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", env.sessionCookie(tc.user))
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="waiting-help"`) {
				t.Fatalf("%s: %d, waiting help shown %v", tc.name, rec.Code, strings.Contains(body, `data-testid="waiting-help"`))
			}
			help := body[strings.Index(body, `data-testid="waiting-help"`):]
			help = help[:strings.Index(help, "</p>")]
			help = strings.Join(strings.Fields(help), " ")
			for _, w := range tc.want {
				if !strings.Contains(help, w) {
					t.Errorf("%s: waiting help lacks %q: %s", tc.name, w, help)
				}
			}
			for _, w := range tc.deny {
				if strings.Contains(help, w) {
					t.Errorf("%s: waiting help says %q: %s", tc.name, w, help)
				}
			}
		}
	})
}
