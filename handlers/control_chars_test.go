package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestFieldsRefuseNULAndControlCharacters: a NUL (or another control
// character but tab and line breaks) in a form field, a JSON field or a
// dataset file's cell is refused with 422 naming the field, on both
// databases, and nothing is stored. (QA: "name":"a\u0000b" was stored on
// SQLite and was a 500 on PostgreSQL, which refuses NUL in text; so was a
// JSONL file whose id was "s\u00001".)
func TestFieldsRefuseNULAndControlCharacters(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		projects := func() int {
			ps, err := env.db.ListProjects(ctx, env.ws.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(ps)
		}
		before := projects()

		// A form, in local mode (before any account exists).
		for _, tc := range []struct {
			name string
			form url.Values
			want []string
		}{
			{"NUL in a name", url.Values{"name": {"a\x00b"}}, []string{`"name"`, "U+0000, NUL"}},
			{"escape in a description", url.Values{"name": {"ok"}, "description": {"red \x1b[31m"}}, []string{`"description"`, "U+001B"}},
		} {
			rec := env.postForm("/projects", tc.form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("form, %s: %d, want 422", tc.name, rec.Code)
			}
			for _, w := range tc.want {
				if !strings.Contains(rec.Body.String(), strings.ReplaceAll(w, `"`, "&#34;")) {
					t.Errorf("form, %s: the page does not say %s", tc.name, w)
				}
			}
		}

		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		for _, tc := range []struct {
			name, target string
			body         any
			want         string // "" when accepted
		}{
			{"NUL in a name", "/api/v1/projects", map[string]string{"name": "a\x00b"}, `"name" holds a control character (U+0000, NUL)`},
			{"U+0001 in a name", "/api/v1/projects", map[string]string{"name": "a\x01b"}, `"name" holds a control character (U+0001)`},
			{"DEL in a description", "/api/v1/projects", map[string]string{"name": "ok", "description": "a\x7fb"}, `"description" holds a control character (U+007F)`},
			{"NUL in a criterion", fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID),
				map[string]any{"name": "r", "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5, "description": "x\x00y"}}},
				`"criteria[0].description" holds a control character (U+0000, NUL)`},
			{"tabs and line breaks are text", "/api/v1/projects", map[string]string{"name": "kept", "description": "one\ttwo\r\nthree"}, ""},
		} {
			rec := a.json(http.MethodPost, tc.target, tok, tc.body)
			var answer APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			switch {
			case tc.want == "" && rec.Code != http.StatusCreated:
				t.Errorf("API, %s: %d %.300s, want 201", tc.name, rec.Code, rec.Body)
			case tc.want != "" && (rec.Code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error.Message, tc.want)):
				t.Errorf("API, %s: %d %.300s, want 422 saying %s", tc.name, rec.Code, rec.Body, tc.want)
			}
		}
		if n := projects(); n != before+1 {
			t.Errorf("%d projects made, want 1 (the one with tabs and line breaks)", n-before)
		}

		// A dataset file spelling NUL as \u0000 in a JSON string.
		for _, tc := range []struct{ name, file, want string }{
			{"in an id", `{"id":"s\u00001","response":"hi","rating":3}` + "\n", `line 1, column “id”: the value holds a NUL character`},
			{"in a text", `{"id":"s1","response":"he\u0000llo","rating":3}` + "\n", `line 1, column “response”: the value holds a NUL character`},
			{"in a key", `{"id":"s1","resp\u0000onse":"hello","rating":3}` + "\n", `line 1: the key`},
		} {
			rec := a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "rows.jsonl", tc.file)
			var answer APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error.Message, tc.want) {
				t.Errorf("JSONL upload, NUL %s: %d %.300s, want 422 saying %s", tc.name, rec.Code, rec.Body, tc.want)
			}
		}
	})
}
