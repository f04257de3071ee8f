package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestLaunchRefusesRepeatedCriteria: POST /api/v1/projects/{id}/runs with
// "criteria": [0, 0] launched a run of one criterion, merging the
// repeated index silently. The API refuses it with 422 naming the field
// and what to do, and the launch form (whose boxes cannot repeat, but a
// post can) refuses it next to the criteria, as its other criteria
// errors; nothing is launched either way.
func TestLaunchRefusesRepeatedCriteria(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		countRuns := func() int {
			runs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
			must(t, err)
			return len(runs)
		}
		first := d.rubric.Criteria[0].Name
		t.Run("form", func(t *testing.T) {
			f := d.launchForm("1", "10")
			f.Del("criteria")
			f.Add("criteria", "0")
			f.Add("criteria", "0")
			before := countRuns()
			rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", rec.Code)
			}
			body := rec.Body.String()
			i := strings.Index(body, `data-testid="field-error-criteria"`)
			if i < 0 {
				t.Fatalf("no error next to the criteria:\n%s", body)
			}
			next := body[i:]
			want := fmt.Sprintf("Criteria: criterion number 1 (“%s”) is chosen more than once; choose each criterion once.", first)
			if !strings.Contains(next[:strings.Index(next, "</div>")], want) {
				t.Errorf("no %q next to the criteria:\n%s", want, next[:strings.Index(next, "</div>")])
			}
			if after := countRuns(); after != before {
				t.Errorf("%d runs launched, want none", after-before)
			}
		})
		// After the form: the API needs an account, and the form is posted without one.
		t.Run("API", func(t *testing.T) {
			a := newAPIClient(t, env)
			owner := env.createUser(env.ws.ID, "owner@a.test", "owner")
			_, tok := env.apiToken(env.ws.ID, owner.ID)
			for _, tc := range []struct {
				name     string
				criteria []int
				want     string
			}{
				{"one index twice", []int{0, 0}, fmt.Sprintf(`"criteria" lists criterion 0 (%q) more than once; list each criterion once`, first)},
				{"repeated after another", []int{1, 0, 1}, fmt.Sprintf(`"criteria" lists criterion 1 (%q) more than once`, d.rubric.Criteria[1].Name)},
			} {
				before := countRuns()
				a.invalidRequests = true // the document says uniqueItems
				rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), tok,
					map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "criteria": tc.criteria})
				a.invalidRequests = false
				if rec.Code != http.StatusUnprocessableEntity {
					t.Errorf("%s: %d %s, want 422", tc.name, rec.Code, rec.Body)
					continue
				}
				if code := errorCode(t, rec); code != "invalid" {
					t.Errorf("%s: code %q, want invalid", tc.name, code)
				}
				var e APIError
				must(t, json.Unmarshal(rec.Body.Bytes(), &e))
				if !strings.Contains(e.Error.Message, tc.want) {
					t.Errorf("%s: message %q, want %q in it", tc.name, e.Error.Message, tc.want)
				}
				if after := countRuns(); after != before {
					t.Errorf("%s: %d runs launched, want none", tc.name, after-before)
				}
			}
		})
	})
}
