package handlers

import (
	"fmt"
	"net/http"
	"testing"
)

// TestEditingAJudgeKeepsItsContextWindow: a context window typed when
// editing a stored judge is saved, and so is clearing it. Before, a judge's
// edit saved every setting but the context window, which only a new judge
// got, so the launch form's fit check and the Test connection hint ("enter
// it under Context window on the judge's page") could not be acted on.
func TestEditingAJudgeKeepsItsContextWindow(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		if rec := env.postForm("/judges", judgeFormValues("Local", "http://127.0.0.1:9/v1", "", "")); rec.Code != http.StatusSeeOther {
			t.Fatalf("save judge: status %d: %s", rec.Code, rec.Body.String())
		}
		j, _ := env.judgeNamed("Local")
		for _, tc := range []struct {
			typed string
			want  string
		}{
			{"8192", "8192"},
			{"32768", "32768"},
			{"", "unknown"},
		} {
			f := judgeFormValues("Local", "http://127.0.0.1:9/v1", "", "")
			f.Set("context_tokens", tc.typed)
			if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), f); rec.Code != http.StatusSeeOther {
				t.Fatalf("edit judge: status %d: %s", rec.Code, rec.Body.String())
			}
			got, _ := env.judgeNamed("Local")
			saved := "unknown"
			if got.ContextTokens != nil {
				saved = fmt.Sprint(*got.ContextTokens)
			}
			if saved != tc.want {
				t.Errorf("context window typed %q on edit: stored %s, want %s", tc.typed, saved, tc.want)
			}
		}
	})
}
