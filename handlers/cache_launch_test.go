package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestLaunchReuseAnswersSetting: the launch form shows "Reuse identical
// judge answers" ticked, and a run turns the answer cache off only when the
// box was shown and left unticked; a post without the box (a script, the
// API without no_cache) keeps it on.
func TestLaunchReuseAnswersSetting(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		page := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID))
		if page.Code != http.StatusOK {
			t.Fatalf("launch page: %d", page.Code)
		}
		body := page.Body.String()
		i := strings.Index(body, `data-testid="reuse-answers"`)
		if i < 0 || !strings.Contains(body[strings.LastIndex(body[:i], "<input"):i], "checked") ||
			!strings.Contains(body, `name="reuse_answers_shown"`) {
			t.Fatalf("launch form lacks a ticked reuse-answers box")
		}
		tests := []struct {
			name        string
			set         map[string]string
			wantNoCache bool
		}{
			{"box ticked", map[string]string{"reuse_answers_shown": "1", "reuse_answers": "on"}, false},
			{"box left unticked", map[string]string{"reuse_answers_shown": "1"}, true},
			{"no box (a script)", nil, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				form := d.launchForm("1", "10")
				for k, v := range tc.set {
					form.Set(k, v)
				}
				id := env.launch(form)
				run, err := env.db.GetRun(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if run.Settings.NoCache != tc.wantNoCache {
					t.Errorf("NoCache = %v, want %v", run.Settings.NoCache, tc.wantNoCache)
				}
			})
		}
	})
}
