package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIBodyErrorsNameTheField: a body the API cannot read gets a 400 (a
// 413 when too large) in the one error shape, naming the field by its JSON
// path and the kind of value it takes, in the API's words: never the
// server's Go types (QA: "cannot unmarshal string into Go struct field
// APILaunch.dataset_id of type int64", "Go value of type struct { Name
// string ...}", a bare "EOF", and "the form is larger than 1 MiB" for JSON).
func TestAPIBodyErrorsNameTheField(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		runs := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
		rubrics := fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID)
		launch := `"dataset_id": 1, "rubric_id": 1, "judge_id": 1`
		for _, tc := range []struct {
			name, target, body string
			want               int
			says               []string
		}{
			{"empty body", "/api/v1/projects", "", http.StatusBadRequest, []string{"the request body is empty", "JSON object"}},
			{"cut short", "/api/v1/projects", `{"name":`, http.StatusBadRequest, []string{"ends too early"}},
			{"not JSON", "/api/v1/projects", `name=x`, http.StatusBadRequest, []string{"not valid JSON at byte 2"}},
			{"a list, not an object", "/api/v1/projects", `[]`, http.StatusBadRequest, []string{"the request body must be an object, not a list"}},
			{"string for a number", runs, `{"dataset_id": "2", "rubric_id": 1, "judge_id": 1}`, http.StatusBadRequest,
				[]string{`"dataset_id" must be a whole number, not a string`}},
			{"nested setting", runs, `{` + launch + `, "settings": {"rounds": 2.5}}`, http.StatusBadRequest,
				[]string{`"settings.rounds" must be a whole number, not 2.5`}},
			// A whole number written with a decimal point or an exponent,
			// and one too large, were each "must be a whole number, not
			// ...", said of a whole number.
			{"whole number with a decimal point", runs, `{` + launch + `, "settings": {"rounds": 2.0}}`, http.StatusBadRequest,
				[]string{`"settings.rounds" must be written as a whole number, without a decimal point or exponent (2), not 2.0`}},
			{"whole number with an exponent", runs, `{"dataset_id": 1e2, "rubric_id": 1, "judge_id": 1}`, http.StatusBadRequest,
				[]string{`"dataset_id" must be written as a whole number, without a decimal point or exponent (100), not 1e2`}},
			{"whole number too large", runs, `{"dataset_id": 99999999999999999999, "rubric_id": 1, "judge_id": 1}`, http.StatusBadRequest,
				[]string{`"dataset_id" is 99999999999999999999, which is out of range: it must be a whole number from -9223372036854775808 to 9223372036854775807`}},
			{"whole number too small", runs, `{` + launch + `, "settings": {"seed": -1e30}}`, http.StatusBadRequest,
				[]string{`"settings.seed" is -1e30, which is out of range`}},
			{"number out of range", runs, `{` + launch + `, "settings": {"temperature": 1e400}}`, http.StatusBadRequest,
				[]string{`"settings.temperature" must be a number within`, "1e400"}},
			{"number for a string", "/api/v1/projects", `{"name": 5}`, http.StatusBadRequest, []string{`"name" must be a string, not a number`}},
			{"unknown field", runs, `{` + launch + `, "settings": {"round": 5}}`, http.StatusBadRequest,
				[]string{`unknown field "round"`, "openapi.json"}},
			{"criterion field of the wrong kind", rubrics, `{"name": "R", "task": "t", "criteria": [{"name": "C", "lo": "1", "hi": 5}]}`,
				http.StatusBadRequest, []string{`"criteria[0].lo" must be a number, not a string`}},
			{"unknown criterion field", rubrics, `{"name": "R", "task": "t", "criteria": [{"name": "C", "lo": 1, "hi": 5, "weight": 2}]}`,
				http.StatusBadRequest, []string{`unknown field "weight" in "criteria[0]"`}},
			{"two values", "/api/v1/projects", `{"name": "a"} {"name": "b"}`, http.StatusBadRequest, []string{"more than one JSON value"}},
			{"over 1 MiB", "/api/v1/projects", `{"name": "` + strings.Repeat("n", 2<<20) + `"}`, http.StatusRequestEntityTooLarge,
				[]string{"request body is larger than 1 MiB"}},
		} {
			rec := a.call(http.MethodPost, tc.target, tok, []byte(tc.body), "application/json")
			if rec.Code != tc.want {
				t.Errorf("%s: %d, want %d: %.300s", tc.name, rec.Code, tc.want, rec.Body)
				continue
			}
			errorCode(t, rec)
			body := rec.Body.String()
			for _, s := range tc.says {
				if !strings.Contains(body, strings.ReplaceAll(s, `"`, `\"`)) {
					t.Errorf("%s: the answer does not say %s: %s", tc.name, s, body)
				}
			}
			for _, internal := range []string{"Go struct", "Go value", "int64", "float64", "unmarshal", "form"} {
				if strings.Contains(body, internal) {
					t.Errorf("%s: the answer speaks of %q: %s", tc.name, internal, body)
				}
			}
		}
	})
}
