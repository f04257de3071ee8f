package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPIListedConflictIsReachable: every operation of the document that
// lists 409 is made to answer it here, and one that lists 409 with no way
// to reach it fails the test (a generated client would carry a branch
// that never runs). Creating a judge, rubric, dataset, upload, review or
// share link, replacing a judge or rubric, and revoking a link or a token
// listed 409, though none of them can be refused for a conflict: a
// retried revoke is a 200, and a save of a judge or
// rubric holds its row, so two saves at once are a 412 or go one after
// the other. Creating a judge listed 404 too, though it looks nothing up.
// An upload past the workspace's upload quota while other uploads wait is
// a 409 (it was a 422).
func TestAPIListedConflictIsReachable(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		d := env.demo()
		ended := func() int64 {
			run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID,
				JudgeID: &d.judge.ID, Name: "ended", Method: models.MethodBatchEval, Status: models.RunSucceeded,
				Settings: evaluator.DefaultSettings(), RubricSnapshot: d.rubric.Evaluator(), JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
			if err := env.db.Gorm.Create(&run).Error; err != nil {
				t.Fatal(err)
			}
			return run.ID
		}
		// The workspace at its limit of runs at once: a queued run with
		// no job stays queued.
		limited := false
		atLimit := func() {
			if limited {
				return
			}
			limited = true
			env.db.MaxActiveRunsPerWorkspace = 1
			blocker := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, Name: "blocker", Method: models.MethodBatchEval}
			if err := env.db.CreateRun(t.Context(), &blocker, nil); err != nil {
				t.Fatal(err)
			}
		}
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID,
			"settings": map[string]any{"rounds": 1, "batch_size": 10}}
		reach := map[string]func() *httptest.ResponseRecorder{
			"POST /api/v1/projects/{id}/uploads": func() *httptest.ResponseRecorder {
				path := fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID)
				defer func(q int64) { env.h.UploadQuotaBytes = q }(env.h.UploadQuotaBytes)
				env.h.UploadQuotaBytes = int64(len(goodCSV)) + 10
				decode[APIUpload](t, a.upload(path, tok, "first.csv", goodCSV), http.StatusCreated)
				return a.upload(path, tok, "second.csv", goodCSV)
			},
			"POST /api/v1/runs/{id}/cancel": func() *httptest.ResponseRecorder {
				return a.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", ended()), tok, nil, "")
			},
			"POST /api/v1/runs/{id}/pause": func() *httptest.ResponseRecorder {
				return a.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/pause", ended()), tok, nil, "")
			},
			"POST /api/v1/runs/{id}/continue": func() *httptest.ResponseRecorder {
				return a.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/continue", ended()), tok, nil, "")
			},
			"POST /api/v1/projects/{id}/runs": func() *httptest.ResponseRecorder {
				atLimit()
				return a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), tok, launch)
			},
			"POST /api/v1/projects/{id}/experiments": func() *httptest.ResponseRecorder {
				atLimit()
				return a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), tok, launch)
			},
		}
		var listed []string
		for path, item := range a.doc.Paths.Map() {
			for method, op := range item.Operations() {
				if op.Responses.Status(http.StatusConflict) != nil {
					listed = append(listed, method+" "+path)
				}
			}
		}
		sort.Strings(listed)
		for _, op := range listed {
			do, ok := reach[op]
			if !ok {
				t.Errorf("%s lists 409, which nothing here shows it answers", op)
				continue
			}
			if r := do(); r.Code != http.StatusConflict {
				t.Errorf("%s = %d %.300s, want the 409 it lists", op, r.Code, r.Body)
			}
		}
		if len(listed) != len(reach) {
			t.Errorf("%d operations list 409, %d are shown to answer it: %v", len(listed), len(reach), listed)
		}
		if a.doc.Paths.Find("/api/v1/judges").Post.Responses.Status(http.StatusNotFound) != nil {
			t.Errorf("POST /api/v1/judges lists 404, which it never answers (it looks nothing up)")
		}
	})
}
