package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIConcurrentPutsFirstWins: two clients GET the same rubric (judge),
// both edit it and PUT with the ETag they read. The first PUT wins and
// answers a new ETag; the second gets 412 "changed" saying to GET again,
// and its change is not saved. Without If-Match a PUT saves as before;
// "*" saves over any state; a weak tag never matches, an unquoted one is
// refused. Then many clients PUT at once with one ETag: exactly one wins
// (TestConditionalSaveChecksAndWritesAtomically holds a save between its
// check and its write to show that the check is atomic).
func TestAPIConcurrentPutsFirstWins(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		rubricBody := func(name string) map[string]any {
			return map[string]any{"name": name, "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}
		}
		judgeBody := func(name string) map[string]any {
			return map[string]any{"name": name, "base_url": "https://judge.example/v1", "model": "m"}
		}
		rubric := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok, rubricBody("R")), http.StatusCreated)
		judge := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok, judgeBody("J")), http.StatusCreated)
		for _, tc := range []struct {
			kind, address string
			body          func(string) map[string]any
		}{
			{"rubric", fmt.Sprintf("/api/v1/rubrics/%d", rubric.ID), rubricBody},
			{"judge", fmt.Sprintf("/api/v1/judges/%d", judge.ID), judgeBody},
		} {
			nameOf := func() string {
				var v struct{ Name string }
				if err := json.Unmarshal(a.get(tc.address, tok).Body.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				return v.Name
			}
			put := func(ifMatch, name string) (int, string, string) {
				t.Helper()
				a.header = http.Header{}
				if ifMatch != "" {
					a.header.Set("If-Match", ifMatch)
				}
				defer func() { a.header = nil }()
				rec := a.json(http.MethodPut, tc.address, tok, tc.body(name))
				return rec.Code, rec.Header().Get("ETag"), rec.Body.String()
			}

			first, second := a.get(tc.address, tok), a.get(tc.address, tok)
			tag := first.Header().Get("ETag")
			if tag == "" || !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || strings.HasPrefix(tag, "W/") {
				t.Fatalf("%s: GET's ETag %q is not a quoted strong tag", tc.kind, tag)
			}
			if second.Header().Get("ETag") != tag {
				t.Fatalf("%s: two GETs of one state answer ETags %q and %q", tc.kind, tag, second.Header().Get("ETag"))
			}

			code, newTag, body := put(tag, tc.kind+" by the first client")
			if code != http.StatusOK || newTag == "" || newTag == tag {
				t.Fatalf("%s: first PUT = %d with ETag %q (read %q): %.300s", tc.kind, code, newTag, tag, body)
			}
			if got := a.get(tc.address, tok).Header().Get("ETag"); got != newTag {
				t.Errorf("%s: the PUT answered ETag %s but GET answers %s", tc.kind, newTag, got)
			}
			code, _, body = put(tag, tc.kind+" by the second client")
			if code != http.StatusPreconditionFailed || !strings.Contains(body, `"code":"changed"`) ||
				!strings.Contains(body, "changed since you read it") || !strings.Contains(body, "GET "+tc.address+" again") {
				t.Errorf("%s: second PUT with the ETag it read = %d, want 412 saying to GET again: %.400s", tc.kind, code, body)
			}
			if got := nameOf(); got != tc.kind+" by the first client" {
				t.Errorf("%s: after the refused PUT the name is %q: the second client overwrote the first", tc.kind, got)
			}

			for _, stale := range []string{"W/" + newTag, `"not-its-tag"`, `"x", ` + tag} {
				if code, _, body := put(stale, "stale"); code != http.StatusPreconditionFailed {
					t.Errorf("%s: If-Match %s = %d, want 412: %.300s", tc.kind, stale, code, body)
				}
			}
			if code, _, body := put(strings.Trim(newTag, `"`), "unquoted"); code != http.StatusBadRequest || !strings.Contains(body, "quotes included") {
				t.Errorf("%s: unquoted If-Match = %d, want 400 saying to quote it: %.300s", tc.kind, code, body)
			}
			if got := nameOf(); got != tc.kind+" by the first client" {
				t.Errorf("%s: a refused PUT saved: name %q", tc.kind, got)
			}
			if code, _, body := put(`"x", `+newTag, "listed"); code != http.StatusOK {
				t.Errorf("%s: If-Match listing the current ETag = %d: %.300s", tc.kind, code, body)
			}
			if code, _, body := put("*", "any state"); code != http.StatusOK {
				t.Errorf("%s: If-Match * = %d: %.300s", tc.kind, code, body)
			}
			if code, _, body := put("", "no precondition"); code != http.StatusOK || nameOf() != "no precondition" {
				t.Errorf("%s: PUT without If-Match = %d, want 200 as before: %.300s", tc.kind, code, body)
			}

			// Racing writers holding one ETag: exactly one saves.
			tag = a.get(tc.address, tok).Header().Get("ETag")
			const writers = 6
			codes := make([]int, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() {
					req := map[string]any{}
					for k, v := range tc.body(fmt.Sprintf("racer %d", i)) {
						req[k] = v
					}
					raw, _ := json.Marshal(req)
					r := newJSONRequest(http.MethodPut, tc.address, tok, raw)
					r.Header.Set("If-Match", tag)
					codes[i] = serve(env, r).Code
				})
			}
			wg.Wait()
			won := 0
			for _, c := range codes {
				switch c {
				case http.StatusOK:
					won++
				case http.StatusPreconditionFailed:
				default:
					t.Errorf("%s: a racing PUT answered %d", tc.kind, c)
				}
			}
			if won != 1 {
				t.Errorf("%s: %d of %d racing PUTs with one ETag saved (%v), want exactly 1", tc.kind, won, writers, codes)
			}
		}
	})
}

// newJSONRequest is an API request with a JSON body and a bearer token, for
// tests that send from several goroutines (apiClient records what it saw
// and is for one goroutine).
func newJSONRequest(method, target, token string, body []byte) *http.Request {
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// serve sends r through the real Echo instance.
func serve(env *testEnv, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, r)
	return rec
}

// TestAPIGetAnswersNotModified: a GET of a rubric (judge) whose
// If-None-Match names the stored state answers 304 with its ETag and no
// body (compared weakly, so W/ matches; "*" and a list holding the tag
// match too); another tag, an unreadable header or a tag of the state
// before a save get the whole object with the current ETag.
func TestAPIGetAnswersNotModified(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		rubricBody := func(name string) map[string]any {
			return map[string]any{"name": name, "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}
		}
		judgeBody := func(name string) map[string]any {
			return map[string]any{"name": name, "base_url": "https://judge.example/v1", "model": "m"}
		}
		rubric := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok, rubricBody("R")), http.StatusCreated)
		judge := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok, judgeBody("J")), http.StatusCreated)
		for _, obj := range []struct {
			kind, address string
			body          func(string) map[string]any
		}{
			{"rubric", fmt.Sprintf("/api/v1/rubrics/%d", rubric.ID), rubricBody},
			{"judge", fmt.Sprintf("/api/v1/judges/%d", judge.ID), judgeBody},
		} {
			tag := a.get(obj.address, tok).Header().Get("ETag")
			if tag == "" {
				t.Fatalf("%s: GET sends no ETag", obj.kind)
			}
			getWith := func(ifNoneMatch string) *httptest.ResponseRecorder {
				t.Helper()
				a.header = http.Header{"If-None-Match": {ifNoneMatch}}
				defer func() { a.header = nil }()
				return a.get(obj.address, tok)
			}
			for _, tc := range []struct {
				name, header string
				want         int
			}{
				{"its ETag", tag, http.StatusNotModified},
				{"its ETag as weak", "W/" + tag, http.StatusNotModified},
				{"any state", "*", http.StatusNotModified},
				{"a list holding it", `"other", ` + tag, http.StatusNotModified},
				{"another tag", `"other"`, http.StatusOK},
				{"unquoted", strings.Trim(tag, `"`), http.StatusOK},
			} {
				rec := getWith(tc.header)
				if rec.Code != tc.want || rec.Header().Get("ETag") != tag {
					t.Errorf("%s, If-None-Match %s (%s) = %d with ETag %q, want %d with %q", obj.kind, tc.header, tc.name, rec.Code, rec.Header().Get("ETag"), tc.want, tag)
				}
				if empty := rec.Body.Len() == 0; empty != (tc.want == http.StatusNotModified) {
					t.Errorf("%s, If-None-Match %s (%s): body of %d bytes", obj.kind, tc.header, tc.name, rec.Body.Len())
				}
			}
			// Saved since: the old tag gets the new state.
			a.header = http.Header{"If-Match": {tag}}
			saved := a.json(http.MethodPut, obj.address, tok, obj.body(obj.kind+" renamed"))
			a.header = nil
			newTag := saved.Header().Get("ETag")
			if saved.Code != http.StatusOK || newTag == tag {
				t.Fatalf("%s: PUT = %d with ETag %q", obj.kind, saved.Code, newTag)
			}
			if rec := getWith(tag); rec.Code != http.StatusOK || rec.Header().Get("ETag") != newTag || !strings.Contains(rec.Body.String(), "renamed") {
				t.Errorf("%s saved since: If-None-Match with the old tag = %d, ETag %q (want 200 with %q and the new state)", obj.kind, rec.Code, rec.Header().Get("ETag"), newTag)
			}
		}
	})
}
