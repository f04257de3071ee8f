package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestLaunchFormSaysCriteriaGoSideBySide: the launch form said each
// criterion is judged "one after the other", but a run's criteria go
// through their rounds side by side under one concurrency budget
// (runner/execute.go, README "How a run works"), so a newcomer expected a
// run of three criteria to take three times one criterion's time.
func TestLaunchFormSaysCriteriaGoSideBySide(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.demo()
		rec := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("launch form: %d %s", rec.Code, rec.Body)
		}
		body := rec.Body.String()
		for _, tt := range []struct {
			text string
			want bool
		}{
			{"one after the other", false},
			{"side by side, sharing the run's concurrency", true},
			{"LLM-Eval scores them all in one call", true},
		} {
			if got := strings.Contains(body, tt.text); got != tt.want {
				t.Errorf("launch form has %q: %v, want %v", tt.text, got, tt.want)
			}
		}
	})
}
