package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// A judge read with GET can be edited and sent back with PUT, as a rubric
// can: the body takes every key of the answer (id, simulated,
// has_stored_key, last_test_at, last_test_error, created_at, updated_at,
// base_url_note, name_note), and ignores the read-only ones. They were
// refused as unknown fields, so GET-edit-PUT of a judge failed. An id that
// is not the judge's is refused, and so is a simulated that is not.
func TestAPIJudgeRoundTripWithReadOnlyFields(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		const secret = "sk-test-never-shown-0123456789"
		created := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok, map[string]any{"name": "Real",
			"base_url": "https://judge.example/v1/chat/completions", "model": "m", "api_key": secret, "price_input_per_mtok": 2.5, "context_tokens": 8192}),
			http.StatusCreated)
		if created.BaseURLNote == "" {
			t.Fatalf("the create answer has no base_url_note to send back: %+v", created)
		}
		// The answer to the create, notes and all, is itself a body PUT takes.
		path := fmt.Sprintf("/api/v1/judges/%d", created.ID)
		if err := env.db.RecordJudgeTest(context.Background(), env.ws.ID, created.ID, time.Now(), "the endpoint refused the API key"); err != nil {
			t.Fatal(err)
		}

		// GET, edit, PUT the whole answer back, with its ETag.
		rec := a.get(path, tok)
		got := decode[map[string]any](t, rec, http.StatusOK)
		for _, k := range []string{"id", "simulated", "has_stored_key", "last_test_at", "last_test_error", "created_at", "updated_at"} {
			if _, ok := got[k]; !ok {
				t.Fatalf("the GET answer has no %q to send back: %s", k, rec.Body)
			}
		}
		got["name"] = "Edited"
		got["base_url_note"] = created.BaseURLNote
		got["name_note"] = "sent back as read"
		a.header = http.Header{"If-Match": {rec.Header().Get("ETag")}}
		put := decode[APIJudge](t, a.json(http.MethodPut, path, tok, got), http.StatusOK)
		a.header = nil
		if put.Name != "Edited" || put.Model != "m" || put.BaseURL != "https://judge.example/v1" || !put.HasStoredKey ||
			put.PriceInputPerMTok == nil || *put.PriceInputPerMTok != 2.5 || put.ContextTokens == nil || *put.ContextTokens != 8192 {
			t.Errorf("after GET-edit-PUT: %+v", put)
		}
		stored, err := env.db.FindJudge(context.Background(), env.ws.ID, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.APIKey != secret || stored.Simulated {
			t.Errorf("the PUT changed the stored key or made the judge simulated: simulated %v, key kept %v", stored.Simulated, stored.APIKey == secret)
		}

		// The simulated judge round-trips too.
		sim, err := env.db.EnsureSimulatedJudge(context.Background(), env.ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		simPath := fmt.Sprintf("/api/v1/judges/%d", sim.ID)
		simBody := decode[map[string]any](t, a.get(simPath, tok), http.StatusOK)
		simBody["max_concurrency"] = 3
		if put := decode[APIJudge](t, a.json(http.MethodPut, simPath, tok, simBody), http.StatusOK); !put.Simulated || put.MaxConcurrency != 3 {
			t.Errorf("simulated judge after GET-edit-PUT: %+v", put)
		}

		// Read-only keys that say something else are refused, naming them.
		body := func(extra map[string]any) map[string]any {
			b := map[string]any{"name": "R", "base_url": "https://judge.example/v1", "model": "m"}
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		for _, tc := range []struct {
			name, method, target string
			body                 map[string]any
			want                 string
		}{
			{"another judge's id", http.MethodPut, path, body(map[string]any{"id": created.ID + 1000}),
				fmt.Sprintf("the body's id %d is not this judge's (%d)", created.ID+1000, created.ID)},
			{"a real judge said simulated", http.MethodPut, path, body(map[string]any{"simulated": true}),
				"simulated cannot be changed"},
			{"the simulated judge said real", http.MethodPut, simPath, body(map[string]any{"simulated": false}),
				"simulated cannot be changed"},
			{"a new judge said simulated", http.MethodPost, "/api/v1/judges", body(map[string]any{"simulated": true}),
				"simulated cannot be changed"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := a.json(tc.method, tc.target, tok, tc.body)
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(apiMessage(t, rec.Body.Bytes()), tc.want) {
					t.Errorf("status %d, want 422 saying %q: %s", rec.Code, tc.want, rec.Body)
				}
			})
		}
		if j, err := env.db.FindJudge(context.Background(), env.ws.ID, created.ID); err != nil || j.Name != "Edited" {
			t.Errorf("a refused PUT changed the judge: %q, %v", j.Name, err)
		}
		var n int
		js, _ := env.db.ListJudges(context.Background(), env.ws.ID)
		for _, j := range js {
			if j.Name == "R" {
				n++
			}
		}
		if n != 0 {
			t.Errorf("a refused POST created %d judges", n)
		}
	})
}
