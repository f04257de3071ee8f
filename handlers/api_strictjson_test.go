package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIBodiesRefuseRepeatedAndMiscasedKeys: every endpoint that reads a
// JSON body refuses a key given twice ({"name": "a", "name": "b"}, which
// encoding/json took as "b") and a key that names a field only when case
// is ignored ({"Name": ...}, taken as "name"), at the top of the body and
// inside it (settings, criteria, mapping), with 400 naming the key by its
// JSON path and what to send. Nothing is saved. The table must name every
// API route taking a body: a new one fails the test until it is added.
func TestAPIBodiesRefuseRepeatedAndMiscasedKeys(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true // the document refuses these bodies too
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		p := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
		rub := decode[APIRubric](t, a.json(http.MethodPost, p("/api/v1/projects/%d/rubrics", env.project.ID), tok,
			map[string]any{"name": "Kept", "task": "t", "criteria": []map[string]any{{"name": "C", "lo": 1, "hi": 5}}}), http.StatusCreated)
		judge := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok,
			map[string]any{"name": "Kept", "base_url": "https://judge.example/v1", "model": "m"}), http.StatusCreated)
		ds := env.demoDataset()
		crit := `"criteria": [{"name": "C", "lo": 1, "hi": 5}]`
		launch := `"dataset_id": 1, "rubric_id": 1, "judge_id": 1`
		type refusal struct{ body, says string }
		twice := func(body, key string) refusal {
			return refusal{body, p("the key %q is given twice", key)}
		}
		miscased := func(body, sent, want string) refusal {
			return refusal{body, p("the key %q is spelled %q here: keys are case-sensitive", sent, want)}
		}
		cases := []struct {
			method, route, target string
			refused               []refusal
		}{
			{http.MethodPost, "/api/v1/projects", "/api/v1/projects", []refusal{
				twice(`{"name": "a", "name": "b"}`, "name"),
				miscased(`{"Name": "a"}`, "Name", "name"),
			}},
			{http.MethodPost, "/api/v1/projects/:id/datasets", p("/api/v1/projects/%d/datasets", env.project.ID), []refusal{
				twice(`{"upload_token": "x", "name": "a", "upload_token": "y"}`, "upload_token"),
				miscased(`{"upload_token": "x", "name": "a", "mapping": {"Fields": []}}`, "mapping.Fields", "mapping.fields"),
			}},
			{http.MethodPost, "/api/v1/datasets/:id/reviews", p("/api/v1/datasets/%d/reviews", ds.ID), []refusal{
				twice(`{"run_id": 1, "criterion": "a", "criterion": "b"}`, "criterion"),
				miscased(`{"Run_ID": 1, "criterion": "a"}`, "Run_ID", "run_id"),
			}},
			{http.MethodPost, "/api/v1/projects/:id/rubrics", p("/api/v1/projects/%d/rubrics", env.project.ID), []refusal{
				twice(`{"name": "R", "task": "t", "criteria": [{"name": "C", "lo": 1, "hi": 5, "lo": 2}]}`, "criteria[0].lo"),
				miscased(`{"name": "R", "task": "t", "criteria": [{"Name": "C", "lo": 1, "hi": 5}]}`, "criteria[0].Name", "criteria[0].name"),
				miscased(`{"name": "R", "task": "t", "fields": [{"column": "response", "LABEL": "Reply"}], `+crit+`}`, "fields[0].LABEL", "fields[0].label"),
			}},
			{http.MethodPut, "/api/v1/rubrics/:id", p("/api/v1/rubrics/%d", rub.ID), []refusal{
				twice(`{"name": "a", "task": "t", "name": "b", `+crit+`}`, "name"),
				miscased(`{"NAME": "a", "task": "t", `+crit+`}`, "NAME", "name"),
				twice(`{"name": "a", "task": "t", "criteria": [{"name": "C", "lo": 1, "hi": 5, "levels": {"low": "x", "low": "y"}}]}`, "criteria[0].levels.low"),
			}},
			{http.MethodPost, "/api/v1/judges", "/api/v1/judges", []refusal{
				twice(`{"name": "a", "name": "b", "base_url": "https://judge.example/v1", "model": "m"}`, "name"),
				miscased(`{"name": "a", "Base_URL": "https://judge.example/v1", "model": "m"}`, "Base_URL", "base_url"),
			}},
			{http.MethodPut, "/api/v1/judges/:id", p("/api/v1/judges/%d", judge.ID), []refusal{
				twice(`{"name": "a", "base_url": "https://judge.example/v1", "model": "m", "model": "n"}`, "model"),
				miscased(`{"name": "a", "base_url": "https://judge.example/v1", "Model": "m"}`, "Model", "model"),
			}},
			{http.MethodPost, "/api/v1/projects/:id/runs", p("/api/v1/projects/%d/runs", env.project.ID), []refusal{
				twice(`{`+launch+`, "settings": {"rounds": 1, "rounds": 2}}`, "settings.rounds"),
				miscased(`{`+launch+`, "settings": {"Rounds": 1}}`, "settings.Rounds", "settings.rounds"),
				twice(`{`+launch+`, "settings": {"geval_steps": {"0": "a", "0": "b"}}}`, "settings.geval_steps.0"),
			}},
			{http.MethodPost, "/api/v1/projects/:id/experiments", p("/api/v1/projects/%d/experiments", env.project.ID), []refusal{
				twice(`{`+launch+`, "judge_id": 2}`, "judge_id"),
				miscased(`{"Dataset_Id": 1, "rubric_id": 1, "judge_id": 1}`, "Dataset_Id", "dataset_id"),
			}},
			{http.MethodPatch, "/api/v1/account", "/api/v1/account", []refusal{
				twice(`{"name": "a", "name": "b"}`, "name"),
				miscased(`{"Name": "a"}`, "Name", "name"),
			}},
			{http.MethodPost, "/api/v1/shares", "/api/v1/shares", []refusal{
				twice(`{"kind": "run", "run_id": 1, "run_id": 2}`, "run_id"),
				miscased(`{"Kind": "run", "run_id": 1}`, "Kind", "kind"),
			}},
		}
		// Routes taking no JSON body (a file, or none at all).
		noBody := map[string]bool{"POST /api/v1/projects/:id/uploads": true, "POST /api/v1/runs/:id/cancel": true,
			"POST /api/v1/runs/:id/pause": true, "POST /api/v1/runs/:id/continue": true,
			"POST /api/v1/shares/:id/revoke": true, "POST /api/v1/tokens/:id/revoke": true}
		covered := map[string]bool{}
		for _, tc := range cases {
			covered[tc.method+" "+tc.route] = true
		}
		for _, r := range env.e.Routes() {
			key := r.Method + " " + r.Path
			if strings.HasPrefix(r.Path, "/api/") && (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch) &&
				!covered[key] && !noBody[key] {
				t.Errorf("%s reads a body and is not in this test's table", key)
			}
		}

		counts := func() [3]int {
			ctx := context.Background()
			ps, err1 := env.db.ListProjects(ctx, env.ws.ID)
			js, err2 := env.db.ListJudges(ctx, env.ws.ID)
			rs, err3 := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
			if err := errors.Join(err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			return [3]int{len(ps), len(js), len(rs)}
		}
		before := counts()
		for _, tc := range cases {
			for _, r := range tc.refused {
				rec := a.call(tc.method, tc.target, tok, []byte(r.body), "application/json")
				if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), strings.ReplaceAll(r.says, `"`, `\"`)) {
					t.Errorf("%s %s %s: %d, want 400 saying %s: %.400s", tc.method, tc.route, r.body, rec.Code, r.says, rec.Body)
				}
			}
		}
		if after := counts(); after != before {
			t.Errorf("projects, judges, rubrics = %v before the refused bodies, %v after", before, after)
		}
		if got := mustUser(t, env, owner.ID).Name; got != owner.Name {
			t.Errorf("a refused PATCH renamed the account %q", got)
		}
		if got := decode[APIRubric](t, a.get(p("/api/v1/rubrics/%d", rub.ID), tok), http.StatusOK); got.Name != "Kept" {
			t.Errorf("a refused PUT renamed the rubric %q", got.Name)
		}
		if got := decode[APIJudge](t, a.get(p("/api/v1/judges/%d", judge.ID), tok), http.StatusOK); got.Name != "Kept" || got.Model != "m" {
			t.Errorf("a refused PUT changed the judge: %+v", got)
		}
	})
}
