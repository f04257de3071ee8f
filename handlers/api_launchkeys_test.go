package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// TestAPIRetriedLaunchSpelledOtherwise: a retry is the same request when
// its JSON says the same, spelled otherwise (keys in another order, spaces
// and line breaks, a character escaped): it answers the first launch (200,
// nothing launched) where it was refused as "another request" with 422
// (QA: curl's pretty-printed body, then a script's re-encoded retry). A key
// stored before bodies were compared as JSON (the hash of the bytes sent)
// still answers a byte-identical retry; another value is still refused.
func TestAPIRetriedLaunchSpelledOtherwise(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		d := env.demo()
		target := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
		first := fmt.Sprintf(`{
  "dataset_id": %d, "rubric_id": %d, "judge_id": %d,
  "name": "caf\u00e9 run",
  "settings": {"rounds": 1, "seed": 7}
}`, d.dataset.ID, d.rubric.ID, d.judge.ID)
		retry := fmt.Sprintf(`{"settings":{"seed":7,"rounds":1},"name":"café run","judge_id":%d,"rubric_id":%d,"dataset_id":%d}`,
			d.judge.ID, d.rubric.ID, d.dataset.ID)
		other := strings.Replace(retry, `"seed":7`, `"seed":8`, 1)
		send := func(body string) *httptest.ResponseRecorder {
			t.Helper()
			return a.call(http.MethodPost, target, tok, []byte(body), "application/json")
		}
		runs := func() int {
			rs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		a.header = http.Header{"Idempotency-Key": {"spelled"}}
		made := decode[APIRun](t, send(first), http.StatusCreated)
		before := runs()
		rec := send(retry)
		if rec.Code != http.StatusOK || rec.Header().Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the same launch spelled otherwise = %d %.300s; want 200 replayed", rec.Code, rec.Body)
		}
		if again := decode[APIRun](t, rec, http.StatusOK); again.ID != made.ID {
			t.Errorf("retry answered run %d, want %d", again.ID, made.ID)
		}
		if rec := send(other); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("the same key with another seed = %d %.300s; want 422", rec.Code, rec.Body)
		}
		if n := runs(); n != before {
			t.Errorf("retries launched %d runs", n-before)
		}

		// A key stored as the hash of the bytes sent (before this change).
		sum := sha256.Sum256([]byte(http.MethodPost + " " + target + "\n" + first))
		if err := env.db.Gorm.Exec("UPDATE launch_keys SET body_hash = ? WHERE idempotency_key = ?", hex.EncodeToString(sum[:]), "spelled").Error; err != nil {
			t.Fatal(err)
		}
		if rec := send(first); rec.Code != http.StatusOK {
			t.Errorf("a byte-identical retry of a key stored before = %d %.300s; want 200", rec.Code, rec.Body)
		}
		if rec := send(other); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("another request with a key stored before = %d; want 422", rec.Code)
		}
		if n := runs(); n != before {
			t.Errorf("retries launched %d runs", n-before)
		}
	})
}
