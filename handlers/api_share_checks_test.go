package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIShareBodiesAndRetriedRevoke: a share link that lacks the id of
// what it opens, names an id its kind does not use, or has an unknown kind
// is refused with 422 naming the field (QA: no run_id answered 404 "run 0
// does not exist", and an experiment's link dropped a run_id silently); a
// revoke sent again answers 200 with the revoked link (QA: 404), while a
// link of another workspace stays 404.
func TestAPIShareBodiesAndRetriedRevoke(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Launched as the local user, before any account exists.
		run := env.launch(env.demo().launchForm("1", "10"))
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		for _, tc := range []struct {
			name string
			body map[string]any
			says string
		}{
			{"run without run_id", map[string]any{"kind": "run"}, `needs run_id`},
			{"run with a negative run_id", map[string]any{"kind": "run", "run_id": -3}, `run_id -3 is not an id`},
			{"comparison with a negative other_run_id", map[string]any{"kind": "compare", "run_id": run, "other_run_id": -1}, `other_run_id -1 is not an id`},
			{"comparison without its second run", map[string]any{"kind": "compare", "run_id": run}, `needs run_id and other_run_id`},
			{"experiment without experiment_id", map[string]any{"kind": "experiment", "run_id": run}, `needs experiment_id`},
			{"experiment with a run_id", map[string]any{"kind": "experiment", "experiment_id": 1, "run_id": run}, `does not use run_id`},
			{"run with other_run_id", map[string]any{"kind": "run", "run_id": run, "other_run_id": run}, `does not use other_run_id`},
			{"unknown kind", map[string]any{"kind": "dataset", "run_id": run}, `use run (with run_id), experiment`},
		} {
			a.invalidRequests = tc.name == "unknown kind"
			rec := a.json(http.MethodPost, "/api/v1/shares", tok, tc.body)
			a.invalidRequests = false
			if rec.Code != http.StatusUnprocessableEntity || errorCode(t, rec) != models.EInvalid || !strings.Contains(rec.Body.String(), tc.says) {
				t.Errorf("%s: %d %s, want 422 saying %s", tc.name, rec.Code, rec.Body, tc.says)
			}
		}
		if links, _ := env.db.ListShareLinks(t.Context(), env.ws.ID); len(links) != 0 {
			t.Errorf("refused bodies made %d links", len(links))
		}

		link := decode[APIShareLink](t, a.json(http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "run", "run_id": run}), http.StatusCreated)
		first := decode[APIShareLink](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/shares/%d/revoke", link.ID), tok, nil), http.StatusOK)
		again := decode[APIShareLink](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/shares/%d/revoke", link.ID), tok, nil), http.StatusOK)
		if first.RevokedAt == nil || again.RevokedAt == nil || !again.RevokedAt.Equal(*first.RevokedAt) || again.Active {
			t.Errorf("revoked twice: first %+v, again %+v", first, again)
		}
		other, err := env.db.CreateWorkspace(t.Context(), "Other", editor.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, otherTok := env.apiToken(other.ID, editor.ID)
		if rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/shares/%d/revoke", link.ID), otherTok, nil); rec.Code != http.StatusNotFound {
			t.Errorf("another workspace revoking the link = %d, want 404", rec.Code)
		}
		if rec := a.json(http.MethodPost, "/api/v1/shares/999999/revoke", tok, nil); rec.Code != http.StatusNotFound {
			t.Errorf("revoking no link = %d, want 404", rec.Code)
		}
	})
}

// TestAPICompareSaysWhichRunIsNotAnID: ?b= that is not a run id is named
// with its value, not called missing (QA: b=abc answered "b is missing").
func TestAPICompareSaysWhichRunIsNotAnID(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true
		for _, tc := range []struct{ query, says string }{
			{"a=1", "b= is missing"},
			{"a=1&b=abc", `b=abc in the address is not a run number`},
			{"a=-3&b=1", `a=-3 in the address is not a run number`},
		} {
			rec := a.get("/api/v1/compare?"+tc.query, "")
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.says) {
				t.Errorf("?%s: %d %s, want 422 saying %s", tc.query, rec.Code, rec.Body, tc.says)
			}
		}
	})
}
