package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIPutKeepsAStoredOverlongName: a rubric or judge whose name was
// stored longer than today's name limit (before the limit existed) was
// refused when a client read it with GET and sent the name back unchanged
// with PUT. The unchanged name is now taken (with If-Match and without),
// the answers say that the stored name is over the limit, a new over-long
// name is still refused, and a name within the limit clears the note.
func TestAPIPutKeepsAStoredOverlongName(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		rubric := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), tok,
			map[string]any{"name": "R", "task": "a reply", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}), http.StatusCreated)
		judge := decode[APIJudge](t, a.json(http.MethodPost, "/api/v1/judges", tok,
			map[string]any{"name": "J", "base_url": "https://judge.example/v1", "model": "m"}), http.StatusCreated)
		for _, tc := range []struct {
			kind, table, address string
			id                   int64
			// body is what a client sends back from the GET answer got,
			// with the name given.
			body func(got map[string]any, name string) map[string]any
		}{
			{"rubric", "rubrics", fmt.Sprintf("/api/v1/rubrics/%d", rubric.ID), rubric.ID, func(got map[string]any, name string) map[string]any {
				got["name"] = name // every key of the answer is sent back
				return got
			}},
			{"judge", "judges", fmt.Sprintf("/api/v1/judges/%d", judge.ID), judge.ID, func(got map[string]any, name string) map[string]any {
				return map[string]any{"name": name, "base_url": got["base_url"], "model": got["model"]}
			}},
		} {
			legacy := "Old name " + strings.Repeat("x", models.MaxNameLength)
			if err := env.db.Gorm.Exec("UPDATE "+tc.table+" SET name = ? WHERE id = ?", legacy, tc.id).Error; err != nil {
				t.Fatal(err)
			}
			read := func() (map[string]any, string) {
				t.Helper()
				rec := a.get(tc.address, tok)
				got := decode[map[string]any](t, rec, http.StatusOK)
				return got, rec.Header().Get("ETag")
			}
			got, tag := read()
			if got["name"] != legacy || !strings.Contains(fmt.Sprint(got["name_note"]), fmt.Sprintf("The stored name is %d characters long", len(legacy))) {
				t.Errorf("%s: GET name %q, name_note %q; want the stored name and a note", tc.kind, got["name"], got["name_note"])
			}
			for _, ifMatch := range []string{tag, ""} {
				a.header = http.Header{}
				if ifMatch != "" {
					a.header.Set("If-Match", ifMatch)
				}
				rec := a.json(http.MethodPut, tc.address, tok, tc.body(got, legacy))
				a.header = nil
				if rec.Code != http.StatusOK {
					t.Errorf("%s: PUT of the name as read (If-Match %q) = %d: %.400s", tc.kind, ifMatch, rec.Code, rec.Body)
					continue
				}
				var out map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &out)
				if out["name"] != legacy || !strings.Contains(fmt.Sprint(out["name_note"]), fmt.Sprintf("Sent back unchanged it is kept; a new name must be at most %d characters", models.MaxNameLength)) {
					t.Errorf("%s: PUT answered name %q, name_note %q", tc.kind, out["name"], out["name_note"])
				}
				got, _ = read()
			}
			// A new over-long name is refused, and nothing changes.
			rec := a.json(http.MethodPut, tc.address, tok, tc.body(got, legacy+"y"))
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.kind+" name is") {
				t.Errorf("%s: PUT of a new over-long name = %d: %.300s", tc.kind, rec.Code, rec.Body)
			}
			if got, _ = read(); got["name"] != legacy {
				t.Errorf("%s: the name became %q", tc.kind, got["name"])
			}
			// A name within the limit replaces it; the note goes.
			rec = a.json(http.MethodPut, tc.address, tok, tc.body(got, "Old name kept"))
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "name_note") {
				t.Errorf("%s: PUT of a name within the limit = %d: %.300s", tc.kind, rec.Code, rec.Body)
			}
		}
	})
}
