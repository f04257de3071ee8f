package handlers

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestRunsStateRubricVersionAndExamples: the API's run object, the JSON
// export and the CSV export say which rubric version a run used (nothing
// when none was recorded) and how many labelled examples its prompts
// carried.
func TestRunsStateRubricVersionAndExamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("versions", 12)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		session := env.sessionCookie(owner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		three := 3
		example := func(id string, score float64) evaluator.Example {
			return evaluator.Example{SampleID: id, Fields: []evaluator.Text{{Label: "Text", Value: "sample " + id}}, Score: score, Reason: "as rated"}
		}
		cases := []struct {
			name     string
			version  *int
			examples []evaluator.Example
			wantCSV  string // the "rubric version" cell
		}{
			{"no version recorded", nil, nil, ""},
			{"version 3 with two examples", &three, []evaluator.Example{example("s001", 2), example("s002", 4)}, "3"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, noisy(d.human, 0.5, 7), func(r *models.Run) {
					r.RubricVersion = tc.version
					r.RubricSnapshot.Criteria[0].Examples = tc.examples
				})
				wantVersion := "<nil>"
				if tc.version != nil {
					wantVersion = fmt.Sprint(*tc.version)
				}
				show := func(v *int) string {
					if v == nil {
						return "<nil>"
					}
					return fmt.Sprint(*v)
				}

				rec := api.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token)
				var got APIRun
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
					t.Fatalf("GET run: %d %s", rec.Code, rec.Body)
				}
				if show(got.RubricVersion) != wantVersion || got.LabelledExamples != len(tc.examples) {
					t.Errorf("API run: rubric_version %s, labelled_examples %d; want %s, %d", show(got.RubricVersion), got.LabelledExamples, wantVersion, len(tc.examples))
				}
				// null, not absent or 0, when no version was recorded.
				var raw map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &raw)
				if v, ok := raw["rubric_version"]; !ok || (tc.version == nil && v != nil) {
					t.Errorf("API run's rubric_version = %v (present %v)", v, ok)
				}

				rec = env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.json", run.ID), nil, "", session)
				var doc report.JSONExport
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
					t.Fatalf("JSON export: %d %.300s", rec.Code, rec.Body)
				}
				p := doc.Report.Provenance
				if show(p.RubricVersion) != wantVersion || p.LabelledExamples != len(tc.examples) {
					t.Errorf("JSON export: rubric_version %s, labelled_examples %d; want %s, %d", show(p.RubricVersion), p.LabelledExamples, wantVersion, len(tc.examples))
				}

				rec = env.send(http.MethodGet, fmt.Sprintf("/runs/%d/export.csv", run.ID), nil, "", session)
				recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
				if err != nil || len(recs) != len(d.rowIDs)+1 {
					t.Fatalf("CSV export: %d records, %v", len(recs), err)
				}
				cell := map[string]string{}
				for i, h := range recs[0] {
					cell[h] = recs[1][i]
				}
				if cell["rubric version"] != tc.wantCSV || cell["labelled examples"] != fmt.Sprint(len(tc.examples)) {
					t.Errorf("CSV: rubric version %q, labelled examples %q; want %q, %d (header %q)", cell["rubric version"], cell["labelled examples"], tc.wantCSV, len(tc.examples), recs[0])
				}
			})
		}
	})
}

// TestAPIRunCachedCalls: the API's run object, alone and in the runs list,
// says how many of its calls the judge answer cache answered; 0 when none.
func TestAPIRunCachedCalls(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("cached", 9)
		owner := env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner)
		_, token := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		for _, tc := range []struct {
			name          string
			calls, cached int
		}{
			{"nothing cached", 4, 0},
			{"some cached", 7, 5},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, d.human, func(r *models.Run) { r.Calls, r.CachedCalls = tc.calls, tc.cached })
				stored, err := env.db.GetRun(t.Context(), run.ID)
				if err != nil || stored.CachedCalls != tc.cached {
					t.Fatalf("stored run: cached_calls %d, %v; the fixture did not store %d", stored.CachedCalls, err, tc.cached)
				}
				rec := api.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token)
				var raw map[string]any
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &raw) != nil {
					t.Fatalf("GET run: %d %s", rec.Code, rec.Body)
				}
				if v, ok := raw["cached_calls"]; !ok || v != float64(tc.cached) {
					t.Errorf("API run's cached_calls = %v (present %v), want %d", v, ok, tc.cached)
				}
				rec = api.get("/api/v1/runs", token)
				var page Page[APIRun]
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
					t.Fatalf("GET runs: %d %s", rec.Code, rec.Body)
				}
				found := false
				for _, r := range page.Items {
					if r.ID == run.ID {
						found = true
						if r.CachedCalls != tc.cached {
							t.Errorf("runs list: cached_calls %d, want %d", r.CachedCalls, tc.cached)
						}
					}
				}
				if !found {
					t.Errorf("run %d not in the runs list", run.ID)
				}
			})
		}
	})
}
