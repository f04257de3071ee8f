package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRetriedLaunchWithIdempotencyKey: a launch retried with its
// Idempotency-Key answers what the first launch made (200, same id,
// Location) and launches nothing; the same key with another body is
// refused with 422 naming the header; two requests racing with one key
// start one run; another token's key is its own; an expired key launches
// again. (QA: a script retrying POST .../runs after losing the answer
// started a second paid run.)
func TestAPIRetriedLaunchWithIdempotencyKey(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		_, other := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "settings": map[string]any{"rounds": 1}}
		changed := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "settings": map[string]any{"rounds": 2}}
		runs := func() int {
			rs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		type made struct {
			ID int64 `json:"id"`
		}
		for _, tc := range []struct {
			name, target, prefix string
		}{
			{"run", fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), "/api/v1/runs/"},
			{"experiment", fmt.Sprintf("/api/v1/projects/%d/experiments", env.project.ID), "/api/v1/experiments/"},
		} {
			key := "retry-" + tc.name
			a.header = http.Header{"Idempotency-Key": {key}}
			first := decode[made](t, a.json(http.MethodPost, tc.target, tok, launch), http.StatusCreated)
			before := runs()
			rec := a.json(http.MethodPost, tc.target, tok, launch)
			again := decode[made](t, rec, http.StatusOK)
			if again.ID != first.ID || rec.Header().Get("Location") != fmt.Sprintf("%s%d", tc.prefix, first.ID) || rec.Header().Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s retried: id %d (first %d), Location %q, Idempotent-Replayed %q", tc.name, again.ID, first.ID,
					rec.Header().Get("Location"), rec.Header().Get("Idempotent-Replayed"))
			}
			if n := runs(); n != before {
				t.Errorf("%s retried with its key: %d runs, was %d", tc.name, n, before)
			}

			// The same key with another body, or on the other endpoint.
			rec = a.json(http.MethodPost, tc.target, tok, changed)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "Idempotency-Key") {
				t.Errorf("%s: same key, other body = %d %.300s; want 422 naming Idempotency-Key", tc.name, rec.Code, rec.Body)
			}
			if n := runs(); n != before {
				t.Errorf("%s: same key, other body launched: %d runs, was %d", tc.name, n, before)
			}

			// Another token's keys are its own.
			if third := decode[made](t, a.json(http.MethodPost, tc.target, other, launch), http.StatusCreated); third.ID == first.ID {
				t.Errorf("%s: another token with the same key got the first token's launch %d", tc.name, first.ID)
			}

			// An expired key launches again.
			if err := env.db.Gorm.Exec("UPDATE launch_keys SET expires_at = ? WHERE idempotency_key = ?", time.Now().UTC().Add(-time.Minute), key).Error; err != nil {
				t.Fatal(err)
			}
			if fresh := decode[made](t, a.json(http.MethodPost, tc.target, tok, launch), http.StatusCreated); fresh.ID == first.ID {
				t.Errorf("%s: an expired key answered the old launch %d", tc.name, first.ID)
			}
		}
		a.header = nil

		// Two requests at once with one key: one run, the same answer.
		body, _ := json.Marshal(launch)
		target := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
		before := runs()
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 2)
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+tok)
				r.Header.Set("Idempotency-Key", "racing")
				recs[i] = httptest.NewRecorder()
				env.e.ServeHTTP(recs[i], r)
			}()
		}
		wg.Wait()
		var ids []int64
		for _, rec := range recs {
			var m made
			if (rec.Code != http.StatusCreated && rec.Code != http.StatusOK) || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
				t.Fatalf("racing launch = %d %.300s", rec.Code, rec.Body)
			}
			ids = append(ids, m.ID)
		}
		if ids[0] != ids[1] {
			t.Errorf("two launches with one key made runs %v", ids)
		}
		if n := runs(); n != before+1 {
			t.Errorf("two launches with one key: %d new runs, want 1", n-before)
		}
	})
}
