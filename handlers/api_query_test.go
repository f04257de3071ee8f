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

// TestAPIRefusesRepeatedQueryParametersAndUnlistedValues: a query parameter
// given twice was read as its first value (?a=1&b=2&a=3 compared run 1, not
// 3; ?excel=semicolon&excel=1 sent the semicolon file), and a value outside
// those the document lists for it was answered as if the parameter were
// absent (?excel=2 or ?excel=true sent the plain file, without the byte
// order mark Excel needs). Each is now refused, naming the parameter.
func TestAPIRefusesRepeatedQueryParametersAndUnlistedValues(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		a.invalidRequests = true
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), time.Minute)
		other := env.waitRun(env.launch(d.launchForm("1", "10")), time.Minute)
		p := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
		csv := p("/api/v1/runs/%d/export.csv", run.ID)
		for _, tc := range []struct {
			target string
			want   int
			code   string
			says   []string
		}{
			{p("/api/v1/compare?a=%d&b=%d&a=%d", run.ID, other.ID, other.ID), http.StatusBadRequest, "bad_request",
				[]string{`the query parameter "a" is given 2 times`, p(`"%d" and "%d"`, run.ID, other.ID), "give it once"}},
			{"/api/v1/runs?limit=1&limit=2", http.StatusBadRequest, "bad_request", []string{`"limit" is given 2 times`}},
			{p("/api/v1/datasets/%d/reviews?criterion=Coherent&criterion=Coherent", d.dataset.ID), http.StatusBadRequest, "bad_request",
				[]string{`"criterion" is given 2 times`}},
			{csv + "?excel=semicolon&excel=1", http.StatusBadRequest, "bad_request", []string{`"excel" is given 2 times`}},
			{csv + "?excel=2", http.StatusUnprocessableEntity, "invalid",
				[]string{`the query parameter "excel" cannot be "2"`, p(`GET /api/v1/runs/{id}/export.csv takes "1" or "semicolon"`)}},
			{csv + "?excel=true", http.StatusUnprocessableEntity, "invalid", []string{`"excel" cannot be "true"`}},
			{csv + "?excel=Semicolon", http.StatusUnprocessableEntity, "invalid", []string{`"excel" cannot be "Semicolon"`}},
			// What the document lists still works, and an empty value is
			// the parameter left out, as for cursor and limit.
			{csv + "?excel=1", http.StatusOK, "", nil},
			{csv + "?excel=", http.StatusOK, "", nil},
			{p("/api/v1/compare?a=%d&b=%d", run.ID, other.ID), http.StatusOK, "", nil},
		} {
			rec := a.json(http.MethodGet, tc.target, "", nil)
			if rec.Code != tc.want {
				t.Errorf("GET %s = %d %s, want %d", tc.target, rec.Code, rec.Body, tc.want)
				continue
			}
			if tc.code == "" {
				continue
			}
			var answer struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
				t.Fatalf("GET %s: %v: %s", tc.target, err, rec.Body)
			}
			if answer.Error.Code != tc.code {
				t.Errorf("GET %s: code %q, want %q", tc.target, answer.Error.Code, tc.code)
			}
			for _, s := range tc.says {
				if !strings.Contains(answer.Error.Message, s) {
					t.Errorf("GET %s answered %q, want it to say %s", tc.target, answer.Error.Message, s)
				}
			}
		}
		// The Excel file is still the Excel file, the plain one plain.
		if body := a.json(http.MethodGet, csv+"?excel=1", "", nil).Body.String(); !strings.HasPrefix(body, "\uFEFF") {
			t.Errorf("?excel=1 lost its byte order mark: %.40q", body)
		}
		if body := a.json(http.MethodGet, csv+"?excel=", "", nil).Body.String(); strings.HasPrefix(body, "\uFEFF") {
			t.Errorf("?excel= (empty) sent the Excel file: %.40q", body)
		}
	})
}
