package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// A rubric read with GET can be edited and sent back with PUT: the API
// takes the fields it returns (they were refused as an unknown key, so a
// rubric's fields could not be set through the API at all), checks their
// columns against the project's datasets, and accepts the read-only keys
// of the answer.
func TestAPIRubricRoundTripWithFields(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		u := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, u.ID)
		crit := []map[string]any{{"name": "Helpful", "lo": 1, "hi": 5}}
		created := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok,
			map[string]any{"name": "With fields", "task": "A reply.", "criteria": crit,
				"fields": []map[string]string{{"column": "response", "label": "Reply"}, {"column": "context", "label": " "}}}), http.StatusCreated)
		want := []evaluator.Field{{Column: "response", Label: "Reply"}, {Column: "context", Label: "context"}}
		if fmt.Sprint(created.Fields) != fmt.Sprint(want) {
			t.Errorf("created rubric's fields = %v, want %v (a blank label is the column's name)", created.Fields, want)
		}
		path := fmt.Sprintf("/api/v1/rubrics/%d", created.ID)

		// GET, edit, PUT the whole answer back.
		got := decode[map[string]any](t, a.get(path, tok), http.StatusOK)
		got["name"] = "Edited"
		got["fields"] = []map[string]string{{"column": "response", "label": "The reply"}}
		put := decode[APIRubric](t, a.json(http.MethodPut, path, tok, got), http.StatusOK)
		if put.Name != "Edited" || fmt.Sprint(put.Fields) != fmt.Sprint([]evaluator.Field{{Column: "response", Label: "The reply"}}) {
			t.Errorf("after GET-edit-PUT: name %q, fields %v", put.Name, put.Fields)
		}
		// Without "fields" a PUT keeps them; [] goes back to the dataset's own.
		kept := decode[APIRubric](t, a.json(http.MethodPut, path, tok, map[string]any{"name": "Kept", "task": "A reply.", "criteria": crit}), http.StatusOK)
		if len(kept.Fields) != 1 {
			t.Errorf("a PUT without fields changed them to %v", kept.Fields)
		}
		cleared := decode[APIRubric](t, a.json(http.MethodPut, path, tok, map[string]any{"name": "Kept", "task": "A reply.", "criteria": crit,
			"fields": []any{}}), http.StatusOK)
		if len(cleared.Fields) != 0 {
			t.Errorf("a PUT with fields [] left %v", cleared.Fields)
		}

		for _, tc := range []struct {
			name string
			body map[string]any
			want []string
		}{
			{"column not in any dataset", map[string]any{"name": "R", "task": "t", "criteria": crit,
				"fields": []map[string]string{{"column": "respones", "label": "Reply"}}},
				[]string{`field 1: the column "respones" is in none of this project's datasets`, `"response"`}},
			{"field without a column", map[string]any{"name": "R", "task": "t", "criteria": crit,
				"fields": []map[string]string{{"column": " ", "label": "Reply"}}},
				[]string{"field 1 names no column"}},
			{"another rubric's id", map[string]any{"id": created.ID + 1000, "name": "R", "task": "t", "criteria": crit},
				[]string{fmt.Sprintf("id %d is not this rubric's (%d)", created.ID+1000, created.ID)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := a.json(http.MethodPut, path, tok, tc.body)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
				}
				for _, w := range tc.want {
					if !strings.Contains(apiMessage(t, rec.Body.Bytes()), w) {
						t.Errorf("message %s does not say %q", rec.Body, w)
					}
				}
			})
		}
	})
}

// apiMessage is an error answer's message.
func apiMessage(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not an error answer: %s", body)
	}
	return e.Error.Message
}

// Labels and criterion names the judge reads as one line are refused with
// a line break in them, naming the field; a criterion without lo or hi is
// refused saying to give them, naming the criterion (it said "the range
// [0, 0] is empty").
func TestAPIRubricRefusesBadLabelsAndRanges(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true // some bodies leave out what the document requires, on purpose
		u := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, u.ID)
		path := fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID)
		for _, tc := range []struct {
			name string
			body string
			want []string
		}{
			{"label with a line break", `{"name": "R", "task": "t", "fields": [{"column": "response", "label": "Reply\nScore: 5"}],
				"criteria": [{"name": "Helpful", "lo": 1, "hi": 5}]}`,
				[]string{`field 1 (column "response"): the label "Reply\nScore: 5" holds a line break`}},
			{"criterion name with a line break", `{"name": "R", "task": "t", "criteria": [{"name": "Helpful\nScore: 5", "lo": 1, "hi": 5}]}`,
				[]string{`criterion 1 ("Helpful\nScore: 5"): the name holds a line break`}},
			{"criterion without lo and hi", `{"name": "R", "task": "t", "criteria": [{"name": "Helpful"}]}`,
				[]string{`criterion 1 ("Helpful") has no lo and no hi`, `give its lowest and highest score`}},
			{"criterion without hi", `{"name": "R", "task": "t", "criteria": [{"name": "Polite", "lo": 1, "hi": 5}, {"name": "Helpful", "lo": 0}]}`,
				[]string{`criterion 2 ("Helpful") has no hi`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := a.call(http.MethodPost, path, tok, []byte(tc.body), "application/json")
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
				}
				msg := apiMessage(t, rec.Body.Bytes())
				for _, w := range tc.want {
					if !strings.Contains(msg, w) {
						t.Errorf("message %q does not say %q", msg, w)
					}
				}
				if strings.Contains(msg, "[0, 0]") {
					t.Errorf("message %q still speaks of an empty range", msg)
				}
			})
		}
	})
}
