package handlers

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIListedNotFoundIsReachable walks the document's operations: each
// that lists 404 answers it for an object that is not there (an address's
// unknown id), and those that can never answer 404 or 409 do not list
// them (a generated client would carry a branch that never runs). POST
// /api/v1/projects listed both, though it looks nothing up and no name of
// a project is unique.
func TestAPIListedNotFoundIsReachable(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true // bodies of {} where fields are required
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		var ops []string
		for path, item := range a.doc.Paths.Map() {
			for method, op := range item.Operations() {
				if op.Responses.Status(http.StatusNotFound) == nil || !strings.Contains(path, "{id}") {
					continue
				}
				ops = append(ops, method+" "+path)
			}
		}
		sort.Strings(ops)
		if len(ops) < 15 {
			t.Fatalf("only %d operations with an id list 404: %v", len(ops), ops)
		}
		for _, op := range ops {
			method, path, _ := strings.Cut(op, " ")
			target := strings.ReplaceAll(path, "{id}", "999999")
			var body []byte
			ctype := ""
			switch {
			case strings.HasSuffix(path, "/uploads"):
				body, ctype = []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\na\n1\n\r\n--b--\r\n"), "multipart/form-data; boundary=b"
			case method == http.MethodPost || method == http.MethodPut:
				body, ctype = []byte(`{}`), "application/json"
			}
			if rec := a.call(method, target, tok, body, ctype); rec.Code != http.StatusNotFound {
				t.Errorf("%s with an unknown id = %d, want the 404 it lists: %.300s", op, rec.Code, rec.Body)
			}
		}
		create := a.doc.Paths.Find("/api/v1/projects").Post
		for _, status := range []int{http.StatusNotFound, http.StatusConflict} {
			if create.Responses.Status(status) != nil {
				t.Errorf("POST /api/v1/projects lists %d, which it never answers", status)
			}
		}
	})
}
