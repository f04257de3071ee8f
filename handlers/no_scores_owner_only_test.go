package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestNoScoresAdviceFitsTheRole: a failed run without scores told every
// reader to test the judge and correct its address, model or key "there",
// linking the judge list, yet only owners may open, test or change a judge
// (an editor or viewer got 403 on its page). An owner is still sent to the
// judge's own page; an editor and a viewer are told to ask an owner.
func TestNoScoresAdviceFitsTheRole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		var runs []models.Run
		for _, status := range []int{http.StatusUnauthorized, http.StatusBadRequest} {
			run, _ := env.runOnFakeJudge(fmt.Sprintf("Judge %d", status), refusingJudge(status, "no"), d.launchForm("1", "10"))
			if run.Status != models.RunFailed || run.JudgeID == nil {
				t.Fatalf("fake judge %d: run %s (%q), want failed", status, run.Status, run.Error)
			}
			runs = append(runs, run)
		}
		owner := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		viewer := env.createUser(env.ws.ID, "vic@a.test", models.RoleViewer)
		for _, run := range runs {
			judgePage := fmt.Sprintf(`href="/judges/%d" data-testid="no-scores-judge"`, *run.JudgeID)
			for _, tc := range []struct {
				name  string
				user  models.User
				owner bool
			}{
				{"owner", owner, true},
				{"editor", editor, false},
				{"viewer", viewer, false},
			} {
				rec := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", env.sessionCookie(tc.user))
				body := rec.Body.String()
				if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="no-scores"`) {
					t.Fatalf("%s reads run %d: %d, no-scores card %v", tc.name, run.ID, rec.Code, strings.Contains(body, `data-testid="no-scores"`))
				}
				if got := strings.Contains(body, judgePage); got != tc.owner {
					t.Errorf("run %d, %s: links the judge's own page = %v, want %v", run.ID, tc.name, got, tc.owner)
				}
				if got := strings.Contains(body, "Only an owner of the workspace can") || strings.Contains(body, "only an owner of the workspace can"); got == tc.owner {
					t.Errorf("run %d, %s: says to ask an owner = %v, want %v", run.ID, tc.name, got, !tc.owner)
				}
				if !tc.owner {
					if !strings.Contains(body, `href="/judges" data-testid="no-scores-judge"`) {
						t.Errorf("run %d, %s: no link to the judge list", run.ID, tc.name)
					}
					if j := env.send(http.MethodGet, fmt.Sprintf("/judges/%d", *run.JudgeID), nil, "", env.sessionCookie(tc.user)); j.Code != http.StatusForbidden {
						t.Errorf("%s opens the judge's page: %d (the advice assumes 403)", tc.name, j.Code)
					}
				}
			}
		}
	})
}
