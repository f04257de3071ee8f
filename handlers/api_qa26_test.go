package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPIExperimentRefusesMethod: an experiment launches every method, so
// a body naming a method other than the default is refused with 422 naming
// "method" and nothing is launched. (QA: {"method": "closerlook"} sent to .../experiments was
// ignored and launched all nine runs, each paid for with a real judge.)
func TestAPIExperimentRefusesMethod(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		before, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The default (batcheval) is taken, so one body serves both launches.
		for _, method := range []string{"closerlook", "geval", "llmeval"} {
			rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), tok, map[string]any{
				"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "method": method,
			})
			if rec.Code != http.StatusUnprocessableEntity || errorCode(t, rec) != models.EInvalid ||
				!strings.Contains(rec.Body.String(), `\"method\"`) || !strings.Contains(rec.Body.String(), "/runs") {
				t.Errorf("experiment with method %q = %d %.300s; want 422 naming \"method\" and the runs endpoint", method, rec.Code, rec.Body)
			}
		}
		after, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Errorf("a refused experiment launched %d runs", len(after)-len(before))
		}
	})
}

// TestAPIEndedRunConflictMessages: cancelling or pausing a run that has
// ended answers 409 with a sentence that reads ("has already been
// cancelled", "has already finished with gaps"), not the raw status.
// (QA: "run 6 has already cancelled", "has already finished_with_gaps".)
func TestAPIEndedRunConflictMessages(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		for _, tc := range []struct{ status, want string }{
			{models.RunCancelled, "has already been cancelled"},
			{models.RunFinishedWithGaps, "has already finished with gaps"},
			{models.RunSucceeded, "has already succeeded"},
			{models.RunFailed, "has already failed"},
		} {
			run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.dataset.ID, RubricID: &d.rubric.ID,
				JudgeID: &d.judge.ID, Name: "ended " + tc.status, Method: models.MethodBatchEval, Status: tc.status,
				Settings: evaluator.DefaultSettings(), RubricSnapshot: d.rubric.Evaluator(), JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
			if err := env.db.Gorm.Create(&run).Error; err != nil {
				t.Fatal(err)
			}
			for _, action := range []string{"cancel", "pause"} {
				if action == "cancel" && tc.status == models.RunCancelled {
					continue // a retried cancel: 200 (TestAPIRetriedStateChangeSucceeds)
				}
				rec := a.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/%s", run.ID, action), tok, nil, "")
				if rec.Code != http.StatusConflict || errorCode(t, rec) != models.EConflict {
					t.Errorf("%s a %s run = %d %.300s; want 409 conflict", action, tc.status, rec.Code, rec.Body)
					continue
				}
				if body := rec.Body.String(); !strings.Contains(body, tc.want) || strings.Contains(body, "finished_with_gaps") {
					t.Errorf("%s a %s run says %.300s; want %q", action, tc.status, body, tc.want)
				}
			}
		}
	})
}

// TestAPIRevokeUnknownShareSaysNotFound: a retried revoke of a revoked
// link answers 200, so the 404 of a link that is not there does not offer
// "or was already revoked" as a reason. (QA: it did.)
func TestAPIRevokeUnknownShareSaysNotFound(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		rec := a.call(http.MethodPost, "/api/v1/shares/9999/revoke", tok, nil, "")
		if rec.Code != http.StatusNotFound || errorCode(t, rec) != models.ENotFound || strings.Contains(rec.Body.String(), "already revoked") {
			t.Errorf("revoke of an unknown link = %d %.300s; want 404 without \"already revoked\"", rec.Code, rec.Body)
		}
	})
}

// TestOpenAPIDescribesEndedStatusesAndErrorCodes: the document's "finished"
// names every status a finished run can have, and its description lists
// every error code the API answers with. (QA: finished_with_gaps, 405's
// method_not_allowed and 503's preparing were not mentioned.)
func TestOpenAPIDescribesEndedStatusesAndErrorCodes(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	finished := doc.Components.Schemas["Run"].Value.Properties["finished"].Value.Description
	for _, s := range []string{models.RunQueued, models.RunRunning, models.RunPaused, models.RunSucceeded,
		models.RunFinishedWithGaps, models.RunFailed, models.RunCancelled} {
		if (models.Run{Status: s}).Finished() && !strings.Contains(finished, s) {
			t.Errorf("Run.finished is described as %q: it does not name %q, a status of a finished run", finished, s)
		}
	}
	codes := []string{"preparing", models.EChanged}
	for _, status := range []int{400, 401, 403, 404, 405, 409, 413, 422, 500} {
		codes = append(codes, errorCodeFor(status, nil))
	}
	for _, c := range codes {
		if !strings.Contains(doc.Info.Description, c) {
			t.Errorf("the document's description does not list the error code %q", c)
		}
	}
}

// TestAPIStalePutAnswers412BeforeCheckingTheBody: a PUT whose If-Match
// names a state saved over since is answered 412 "changed" (GET it again)
// even when its body would be refused, as preconditions come before the
// request content (RFC 9110 §13.2.1). (QA: a stale PUT with a body
// written against the old state got 422 about the body, and only after
// fixing it learned that the object had changed.)
func TestAPIStalePutAnswers412BeforeCheckingTheBody(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		rubric := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok,
			map[string]any{"name": "R", "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}), http.StatusCreated)
		judge := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok,
			map[string]any{"name": "J", "base_url": "https://judge.example/v1", "model": "m"}), http.StatusCreated)
		for _, tc := range []struct {
			kind, address  string
			valid, refused map[string]any
		}{
			{"rubric", fmt.Sprintf("/api/v1/rubrics/%d", rubric.ID),
				map[string]any{"name": "R2", "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}},
				map[string]any{"name": "R3", "task": "a reply", "criteria": []map[string]any{}}},
			{"judge", fmt.Sprintf("/api/v1/judges/%d", judge.ID),
				map[string]any{"name": "J2", "base_url": "https://judge.example/v1", "model": "m"},
				map[string]any{"name": "J3"}},
		} {
			read := a.get(tc.address, tok)
			stale := read.Header().Get("ETag")
			a.header = http.Header{"If-Match": {stale}}
			if rec := a.json(http.MethodPut, tc.address, tok, tc.valid); rec.Code != http.StatusOK {
				t.Fatalf("%s: first PUT = %d %.300s", tc.kind, rec.Code, rec.Body)
			}
			rec := a.json(http.MethodPut, tc.address, tok, tc.refused)
			a.header = nil
			if rec.Code != http.StatusPreconditionFailed || errorCode(t, rec) != models.EChanged || !strings.Contains(rec.Body.String(), tc.address) {
				t.Errorf("%s: stale PUT with a refused body = %d %.300s; want 412 changed saying to GET %s again", tc.kind, rec.Code, rec.Body, tc.address)
			}
			// Without If-Match the same body is checked and refused.
			if rec := a.json(http.MethodPut, tc.address, tok, tc.refused); rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: unconditional PUT with a refused body = %d, want 422", tc.kind, rec.Code)
			}
		}
	})
}
