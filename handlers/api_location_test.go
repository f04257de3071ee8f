package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPICreatedAnswersGiveLocation: every 201 of an object the API can
// read again carries, in Location, the address that reads it, and reading
// it answers the same object. (QA: projects, datasets, rubrics and judges
// answered 201 without Location; only launches had one.)
func TestAPICreatedAnswersGiveLocation(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "r.csv", ratedCSV(4)), http.StatusCreated)
		d := env.demo()
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "settings": map[string]any{"rounds": 1}}
		for _, tc := range []struct {
			name, target, prefix string
			body                 any
		}{
			{"project", "/api/v1/projects", "/api/v1/projects/", map[string]string{"name": "located"}},
			{"dataset", fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), "/api/v1/datasets/", map[string]string{"upload_token": up.Token, "name": "located"}},
			{"rubric", fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), "/api/v1/rubrics/",
				map[string]any{"name": "located", "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}},
			{"judge", "/api/v1/judges", "/api/v1/judges/", map[string]any{"name": "located", "base_url": "https://judge.example/v1", "model": "m"}},
			{"run", fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), "/api/v1/runs/", launch},
			{"experiment", fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), "/api/v1/experiments/", launch},
		} {
			rec := a.json(http.MethodPost, tc.target, tok, tc.body)
			created := decode[struct {
				ID int64 `json:"id"`
			}](t, rec, http.StatusCreated)
			want := fmt.Sprintf("%s%d", tc.prefix, created.ID)
			if got := rec.Header().Get("Location"); got != want {
				t.Errorf("%s: Location %q, want %q", tc.name, got, want)
				continue
			}
			again := a.get(want, tok)
			var read struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal(again.Body.Bytes(), &read); again.Code != http.StatusOK || err != nil || read.ID != created.ID {
				t.Errorf("%s: GET %s = %d %.200s", tc.name, want, again.Code, again.Body)
			}
		}
	})
}
