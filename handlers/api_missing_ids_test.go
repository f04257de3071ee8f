package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIMissingIDsAreNamed: a body that leaves out an id the endpoint
// needs is refused with 422 naming what is missing, and nothing is made.
// An import without upload_token answered 404 "that upload has expired or
// does not exist: upload the file again", sending the caller to upload a
// file that was never the problem; a launch without one of its three ids
// said that a launch names all three, not which one was missing.
func TestAPIMissingIDsAreNamed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		a.invalidRequests = true // the bodies leave out required fields on purpose
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		p := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
		datasets := p("/api/v1/projects/%d/datasets", env.project.ID)
		runs := p("/api/v1/projects/%d/runs", env.project.ID)
		experiments := p("/api/v1/projects/%d/experiments", env.project.ID)
		// An upload waits, so a wrong answer could import it.
		if rec := a.upload(p("/api/v1/projects/%d/uploads", env.project.ID), tok, "r.csv", ratedCSV(4)); rec.Code != http.StatusCreated {
			t.Fatalf("upload = %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			target string
			body   any
			says   []string
		}{
			{datasets, map[string]any{"name": "no token"}, []string{`"upload_token" is missing`, p("POST /api/v1/projects/%d/uploads", env.project.ID)}},
			{datasets, map[string]any{"name": "blank token", "upload_token": "  "}, []string{`"upload_token" is missing`}},
			{runs, map[string]any{}, []string{`"dataset_id", "rubric_id" and "judge_id" are missing`, "nothing was launched"}},
			{runs, map[string]any{"dataset_id": d.dataset.ID}, []string{`"rubric_id" and "judge_id" are missing`}},
			{runs, map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID}, []string{`, and "judge_id" is missing`}},
			{runs, map[string]any{"rubric_id": d.rubric.ID, "judge_id": 0}, []string{`"dataset_id" and "judge_id" are missing`}},
			{experiments, map[string]any{"rubric_id": d.rubric.ID, "judge_id": d.judge.ID}, []string{`, and "dataset_id" is missing`}},
		} {
			rec := a.json(http.MethodPost, tc.target, tok, tc.body)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("POST %s %v = %d %s, want 422", tc.target, tc.body, rec.Code, rec.Body)
				continue
			}
			var answer APIError
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Error.Code != "invalid" {
				t.Errorf("POST %s %v: %v %s, want code invalid", tc.target, tc.body, err, rec.Body)
			}
			for _, s := range tc.says {
				if !strings.Contains(answer.Error.Message, s) {
					t.Errorf("POST %s %v said %q, want it to say %s", tc.target, tc.body, answer.Error.Message, s)
				}
			}
		}
		ds, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 {
			t.Errorf("a refused import made a dataset: %d datasets", len(ds))
		}
		rs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 0 {
			t.Errorf("a refused launch made %d runs", len(rs))
		}
	})
}
