package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAPIRefusesUnknownQueryParameters: a query parameter an endpoint does
// not take is refused naming it and the ones it takes, where it was
// silently ignored (?status=failed listed every run as if filtered), and
// nothing is done; the parameters the document lists still work.
func TestAPIRefusesUnknownQueryParameters(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), time.Minute)
		p := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
		for _, tc := range []struct {
			method, target string
			want           int
			says           []string
		}{
			{http.MethodGet, "/api/v1/runs?status=failed", http.StatusBadRequest,
				[]string{`"status" is not one GET /api/v1/runs takes`, `it takes "cursor", "limit" and "project_id"`}},
			{http.MethodGet, p("/api/v1/runs?project_id=%d&experiment_id=1", env.project.ID), http.StatusBadRequest, []string{`"experiment_id"`}},
			{http.MethodGet, p("/api/v1/runs/%d?verbose=1", run.ID), http.StatusBadRequest,
				[]string{`"verbose" is not one GET /api/v1/runs/{id} takes (it takes no query parameters)`}},
			{http.MethodGet, p("/api/v1/compare?a=%d&b=%d&sort=asc", run.ID, run.ID), http.StatusBadRequest, []string{`"sort"`, `"a", "b" and "criterion"`}},
			{http.MethodGet, "/api/v1/projects?Limit=1", http.StatusBadRequest, []string{`"Limit"`}},
			{http.MethodPost, "/api/v1/projects?dry_run=1", http.StatusBadRequest, []string{`"dry_run"`}},
			{http.MethodGet, "/api/v1/runs?limit=1&cursor=", http.StatusOK, nil},
			{http.MethodGet, p("/api/v1/runs/%d/export.csv?excel=1", run.ID), http.StatusOK, nil},
			{http.MethodGet, p("/api/v1/datasets/%d/reviews?criterion=Coherent&limit=5", d.dataset.ID), http.StatusOK, nil},
		} {
			var body any
			if tc.method == http.MethodPost {
				body = map[string]string{"name": "made by a refused request"}
			}
			rec := a.json(tc.method, tc.target, "", body)
			if rec.Code != tc.want {
				t.Errorf("%s %s = %d %s, want %d", tc.method, tc.target, rec.Code, rec.Body, tc.want)
				continue
			}
			var answer struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			for _, s := range tc.says {
				if !strings.Contains(answer.Error.Message, s) || answer.Error.Code != "bad_request" {
					t.Errorf("%s %s answered %s, want it to say %s", tc.method, tc.target, rec.Body, s)
				}
			}
		}
		projects, err := env.db.ListProjects(context.Background(), env.ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range projects {
			if pr.Name == "made by a refused request" {
				t.Errorf("a refused POST made project %d", pr.ID)
			}
		}
		// Every API route is in the document, so none goes unchecked.
		for _, r := range env.h.routes() {
			if _, ok := apiQueryParams[r.Method+" "+r.Path]; strings.HasPrefix(r.Path, "/api/") && !ok {
				t.Errorf("%s %s is not in the OpenAPI document: its query parameters go unchecked", r.Method, r.Path)
			}
		}
	})
}
