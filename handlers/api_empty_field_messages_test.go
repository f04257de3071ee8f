package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIEmptyFieldMessages: the API's error JSON for an empty name carries the model's message whole, a
// sentence that says what to do and names the field ("Give the project a
// name: its name is empty."), where it was a clause saying only what was
// wrong ("a project needs a name"). (A judge's fields are checked by the
// judge form's own words first.) On SQLite and PostgreSQL.
func TestAPIEmptyFieldMessages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		pid := env.project.ID
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@empty.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		criteria := []map[string]any{{"name": "Good", "description": "is it good", "lo": 1, "hi": 5}}
		before, err := env.db.ListProjects(ctx, env.ws.ID, models.WithArchived())
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name, target, token string
			body                any
			want                string
		}{
			{"project", "/api/v1/projects", tok, map[string]any{"name": "  "}, "Give the project a name: its name is empty."},
			{"rubric", fmt.Sprintf("/api/v1/projects/%d/rubrics", pid), tok,
				map[string]any{"name": "", "task": "a reply", "criteria": criteria}, "Give the rubric a name: its name is empty."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := a.json(http.MethodPost, tc.target, tc.token, tc.body)
				var answer APIError
				if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
					t.Fatalf("not JSON: %v %.300s", err, rec.Body)
				}
				if rec.Code != http.StatusUnprocessableEntity || answer.Error.Code != models.EInvalid || answer.Error.Message != tc.want {
					t.Errorf("%d %s %q, want 422 invalid %q", rec.Code, answer.Error.Code, answer.Error.Message, tc.want)
				}
			})
		}
		after, err := env.db.ListProjects(ctx, env.ws.ID, models.WithArchived())
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Errorf("%d projects after the refusals, want %d", len(after), len(before))
		}
	})
}
