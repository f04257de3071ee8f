package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAPIReviewsOfNoSuchCriterion: ?criterion= naming no criterion of the
// dataset is refused (400) naming it and the ones the dataset has; a
// criterion of a run's rubric without reviews yet is an empty list. It
// answered {"items":[]}, which a script read as "no reviews yet".
func TestAPIReviewsOfNoSuchCriterion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("reviewed", 4)
		run := env.storedRun(d, "judged", d.human, func(r *models.Run) {
			r.RubricSnapshot.Criteria = append(r.RubricSnapshot.Criteria, evaluator.Criterion{Name: "Fluency", Lo: 1, Hi: 5})
		})
		empty := env.ratedDataset("no runs", 2)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		a := newAPIClient(t, env)
		path := fmt.Sprintf("/api/v1/datasets/%d/reviews", d.ds.ID)
		if rec := a.json(http.MethodPost, path, tok, map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000", "rating": 3}); rec.Code != http.StatusCreated {
			t.Fatalf("review: %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			path  string
			code  int
			items int
			says  []string
		}{
			{path + "?criterion=Quality", http.StatusOK, 1, nil},
			{path + "?criterion=Fluency", http.StatusOK, 0, nil},
			{path + "?criterion=Nope", http.StatusBadRequest, 0, []string{`no criterion "Nope"`, `"Fluency" and "Quality"`}},
			{path + "?criterion=quality", http.StatusBadRequest, 0, []string{`no criterion "quality"`, `case included`}},
			{fmt.Sprintf("/api/v1/datasets/%d/reviews?criterion=Quality", empty.ds.ID), http.StatusBadRequest, 0, []string{"has none yet"}},
		} {
			rec := a.get(tc.path, tok)
			if rec.Code != tc.code {
				t.Errorf("GET %s: %d, want %d: %s", tc.path, rec.Code, tc.code, rec.Body)
				continue
			}
			if tc.code == http.StatusOK {
				if p := decode[Page[APIReview]](t, rec, http.StatusOK); len(p.Items) != tc.items {
					t.Errorf("GET %s: %d reviews, want %d", tc.path, len(p.Items), tc.items)
				}
				continue
			}
			if code := errorCode(t, rec); code != "bad_request" {
				t.Errorf("GET %s: code %q", tc.path, code)
			}
			msg := decode[APIError](t, rec, tc.code).Error.Message
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("GET %s: %q does not say %s", tc.path, msg, s)
				}
			}
		}
	})
}
