package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// apiClient calls the API through the real Echo instance and checks every
// request and every answer against the OpenAPI document the server serves.
type apiClient struct {
	env    *testEnv
	doc    *openapi3.T
	router routers.Router
	// invalidRequests turns off the request check, for tests that send a
	// request the document forbids on purpose (the answer is still checked).
	invalidRequests bool
	// header is added to every request (e.g. Idempotency-Key).
	header http.Header
	// seen records, per operation ("GET /api/v1/runs/{id}"), the statuses
	// whose answers were validated.
	seen map[string][]int
}

func newAPIClient(t *testing.T, env *testEnv) *apiClient {
	t.Helper()
	rec := env.get("/api/v1/openapi.json")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/v1/openapi.json = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the served OpenAPI document does not load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the served OpenAPI document is not valid OpenAPI 3: %v", err)
	}
	closeAnswerSchemas(doc)
	// Requests in tests go to example.com; the document's server is "/".
	doc.Servers = openapi3.Servers{{URL: "http://example.com/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &apiClient{env: env, doc: doc, router: router, seen: map[string][]int{}}
}

// closeAnswerSchemas makes every object schema of the document's answers
// that lists its properties refuse any other (additionalProperties: false,
// unless the document says otherwise): a field an answer carries that the
// document does not describe is a field a generated client drops. A schema
// that is one member of an allOf of several is left open, since the other
// members add to it.
func closeAnswerSchemas(doc *openapi3.T) {
	var members []*openapi3.Schema
	var collect func(r *openapi3.SchemaRef, seen map[*openapi3.Schema]bool)
	each := func(s *openapi3.Schema, f func(*openapi3.SchemaRef)) {
		for _, p := range s.Properties {
			f(p)
		}
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, m := range group {
				f(m)
			}
		}
		if s.Items != nil {
			f(s.Items)
		}
		if s.AdditionalProperties.Schema != nil {
			f(s.AdditionalProperties.Schema)
		}
	}
	collect = func(r *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		seen[r.Value] = true
		if len(r.Value.AllOf) > 1 {
			for _, m := range r.Value.AllOf {
				members = append(members, m.Value)
			}
		}
		each(r.Value, func(c *openapi3.SchemaRef) { collect(c, seen) })
	}
	var answers []*openapi3.SchemaRef
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, media := range resp.Value.Content {
					answers = append(answers, media.Schema)
				}
			}
		}
	}
	seen := map[*openapi3.Schema]bool{}
	for _, r := range answers {
		collect(r, seen)
	}
	open := map[*openapi3.Schema]bool{}
	for _, m := range members {
		open[m] = true
	}
	closed := false
	for s := range seen {
		if open[s] || len(s.Properties) == 0 || s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil {
			continue
		}
		s.AdditionalProperties.Has = &closed
	}
}

// call sends a request with a bearer token ("" for none) and validates the
// request and the answer against the document.
func (a *apiClient) call(method, target, token string, body []byte, contentType string) *httptest.ResponseRecorder {
	t := a.env.t
	t.Helper()
	newReq := func() *http.Request {
		r := httptest.NewRequest(method, target, bytes.NewReader(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range a.header {
			r.Header[k] = v
		}
		return r
	}
	rec := httptest.NewRecorder()
	a.env.e.ServeHTTP(rec, newReq())

	req := newReq()
	route, params, err := a.router.FindRoute(req)
	if err != nil {
		t.Errorf("%s %s is not in the OpenAPI document: %v", method, target, err)
		return rec
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && !a.invalidRequests {
		t.Errorf("%s %s: the request does not match the document: %v", method, target, err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s: the %d answer does not match the document: %v\nbody: %.600s", method, target, rec.Code, err, rec.Body)
	}
	// A 503 (figures being prepared: Retry-After) is an answer a client
	// must wait out, not an error: the document describes it where it
	// comes, rather than leaving it to the default answer.
	// A 429 (rate limited: Retry-After) too, and every error status the
	// handlers answer: a generated client learns from the document which
	// errors an operation can give, not from its default answer.
	if rec.Code >= 400 && rec.Code < 500 && rec.Code != http.StatusMethodNotAllowed && route.Operation.Responses.Status(rec.Code) == nil {
		t.Errorf("%s %s answered %d (Retry-After %q), which the document does not describe for it (only under default): %.300s",
			method, target, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec.Code == http.StatusServiceUnavailable && route.Operation.Responses.Status(rec.Code) == nil {
		t.Errorf("%s %s answered 503 (Retry-After %q), which the document does not describe for it", method, target, rec.Header().Get("Retry-After"))
	}
	// A Location the document promises is sent (kin-openapi checks only
	// the headers marked required).
	if resp := route.Operation.Responses.Status(rec.Code); resp != nil && resp.Value != nil && resp.Value.Headers["Location"] != nil &&
		!strings.HasPrefix(rec.Header().Get("Location"), "/api/v1/") {
		t.Errorf("%s %s: the %d answer has no Location, which the document promises", method, target, rec.Code)
	}
	op := method + " " + route.Path
	a.seen[op] = append(a.seen[op], rec.Code)
	return rec
}

func (a *apiClient) json(method, target, token string, v any) *httptest.ResponseRecorder {
	a.env.t.Helper()
	var body []byte
	ctype := ""
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			a.env.t.Fatal(err)
		}
		ctype = "application/json"
	}
	return a.call(method, target, token, body, ctype)
}

func (a *apiClient) get(target, token string) *httptest.ResponseRecorder {
	a.env.t.Helper()
	return a.call(http.MethodGet, target, token, nil, "")
}

// upload posts a file as multipart/form-data.
func (a *apiClient) upload(target, token, filename, content string) *httptest.ResponseRecorder {
	a.env.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		a.env.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	return a.call(http.MethodPost, target, token, buf.Bytes(), mw.FormDataContentType())
}

// decode reads a JSON answer, failing on the wrong status.
func decode[T any](t *testing.T, rec *httptest.ResponseRecorder, want int) T {
	t.Helper()
	var v T
	if rec.Code != want {
		t.Fatalf("status %d, want %d: %.800s", rec.Code, want, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("answer is not the expected JSON: %v: %.300s", err, rec.Body)
	}
	return v
}

// errorCode reads the code of an error answer, checking the one shape.
func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e APIError
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Errorf("error answer %d is not {\"error\": {\"code\", \"message\"}}: %.300s", rec.Code, rec.Body)
	}
	return e.Error.Code
}

// ratedCSV is a small dataset with one human rating per sample.
func ratedCSV(n int) string {
	var b strings.Builder
	b.WriteString("id,response,rating\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "s%d,\"Reply number %d %s\",%d\n", i, i, strings.Repeat("with more words ", i%5), 1+i%5)
	}
	return b.String()
}

// tokenFromPage makes a token on the tokens page, as a person would, and
// returns it with its id (from the page's revoke form).
func (env *testEnv) tokenFromPage(session *http.Cookie, name string) (string, int64) {
	env.t.Helper()
	rec := env.send(http.MethodPost, "/tokens", url.Values{"name": {name}}, "", session)
	if rec.Code != http.StatusCreated {
		env.t.Fatalf("POST /tokens = %d: %.300s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		env.t.Errorf("the page showing a new token may be cached: Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
	m := regexp.MustCompile(`class="once-link">(bev_[A-Za-z0-9_-]+)<`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		env.t.Fatalf("the token is not on the page: %.2000s", rec.Body)
	}
	id := regexp.MustCompile(`action="/tokens/(\d+)/revoke"`).FindStringSubmatch(rec.Body.String())
	if id == nil {
		env.t.Fatalf("no revoke form on the page")
	}
	var n int64
	fmt.Sscan(id[1], &n)
	// Shown once: the list shows only the start of it afterwards.
	if again := env.send(http.MethodGet, "/tokens", nil, "", session); strings.Contains(again.Body.String(), m[1]) {
		env.t.Errorf("the token is shown again on a later visit")
	} else if !strings.Contains(again.Body.String(), "<td>no (works)</td>") {
		// It said "never" under Revoked, read as a token that cannot be revoked.
		env.t.Errorf("a working token's Revoked cell does not say it works")
	}
	return m[1], n
}

// pollRun polls a run's status through the API until it is finished.
func (a *apiClient) pollRun(id int64, token string, within time.Duration) APIRun {
	t := a.env.t
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		run := decode[APIRun](t, a.get(fmt.Sprintf("/api/v1/runs/%d", id), token), http.StatusOK)
		if run.Finished {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s after %s", id, run.Status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAPIEndToEnd: a person makes a token on the tokens page, uploads a
// dataset, maps it, writes a rubric, launches on the simulated judge, polls
// until the run finishes and fetches its results; after revoking the token
// the same call gets 401.
func TestAPIEndToEnd(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		session := env.sessionCookie(editor)
		token, tokenID := env.tokenFromPage(session, "e2e script")

		project := decode[APIProject](t, a.json(http.MethodPost, "/api/v1/projects", token, map[string]string{"name": "API project"}), http.StatusCreated)
		up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", project.ID), token, "replies.csv", ratedCSV(12)), http.StatusCreated)
		if up.Rows != 12 || strings.Join(up.Columns, ",") != "id,response,rating" {
			t.Fatalf("upload = %d rows, columns %v", up.Rows, up.Columns)
		}
		ds := decode[APIDataset](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", project.ID), token, map[string]any{
			"upload_token": up.Token, "name": "replies",
			"mapping": map[string]any{"id_column": "id", "fields": []map[string]string{{"column": "response", "label": "Reply"}}, "rating_columns": []string{"rating"}},
		}), http.StatusCreated)
		if ds.RowCount != 12 || ds.IDColumn != "id" || len(ds.RatingColumns) != 1 {
			t.Fatalf("dataset = %+v", ds)
		}
		rub := decode[APIRubric](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", project.ID), token, map[string]any{
			"name": "Helpfulness", "task": "a chatbot reply",
			"criteria": []map[string]any{{"name": "Helpful", "description": "Does the reply help?", "lo": 1, "hi": 5,
				"levels": map[string]string{"low": "no help", "middle": "some help", "high": "solves it"}, "human_column": "rating"}},
		}), http.StatusCreated)
		judges := decode[Page[APIJudge]](t, a.get("/api/v1/judges", token), http.StatusOK)
		var sim APIJudge
		for _, j := range judges.Items {
			if j.Simulated {
				sim = j
			}
		}
		if sim.ID == 0 {
			t.Fatalf("no simulated judge in %+v", judges)
		}
		rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", project.ID), token, map[string]any{
			"dataset_id": ds.ID, "rubric_id": rub.ID, "judge_id": sim.ID, "name": "via the API",
			"settings": map[string]any{"rounds": 2, "batch_size": 4, "seed": 3},
		})
		launched := decode[APIRun](t, rec, http.StatusCreated)
		if rec.Header().Get("Location") != fmt.Sprintf("/api/v1/runs/%d", launched.ID) || launched.Settings.Rounds != 2 || launched.Settings.BatchSize != 4 {
			t.Errorf("launch = %+v, Location %q", launched, rec.Header().Get("Location"))
		}
		run := a.pollRun(launched.ID, token, 60*time.Second)
		if run.Status != models.RunSucceeded || !run.Simulated {
			t.Fatalf("run ended %s (%s)", run.Status, run.Error)
		}
		res := decode[map[string]any](t, a.get(fmt.Sprintf("/api/v1/runs/%d/results", run.ID), token), http.StatusOK)
		// The export's schema version 2: the figures are under "report".
		if res["schema_version"] != float64(report.ExportSchemaVersion) {
			t.Errorf("results schema_version = %v, want %d", res["schema_version"], report.ExportSchemaVersion)
		}
		crits := res["report"].(map[string]any)["criteria"].([]any)
		samples := crits[0].(map[string]any)["samples"].([]any)
		if len(crits) != 1 || len(samples) != 12 {
			t.Fatalf("results: %d criteria, %d samples", len(crits), len(samples))
		}
		for _, s := range samples {
			sm := s.(map[string]any)
			if sm["final"] == nil || sm["human"] == nil || len(sm["rounds"].([]any)) != 2 {
				t.Errorf("sample %v lacks a score, its human rating or a round", sm)
			}
		}
		if p := crits[0].(map[string]any)["pearson"].(map[string]any); p["n"].(float64) != 12 {
			t.Errorf("pearson over %v samples, want 12", p["n"])
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/tokens/%d/revoke", tokenID), nil, "", session); rec.Code != http.StatusSeeOther {
			t.Fatalf("revoke = %d", rec.Code)
		}
		rec = a.get(fmt.Sprintf("/api/v1/runs/%d", run.ID), token)
		if rec.Code != http.StatusUnauthorized || errorCode(t, rec) != models.EUnauthorized {
			t.Errorf("revoked token: %d %s, want 401 unauthorized", rec.Code, rec.Body)
		}
	})
}

// TestAPIEveryEndpointMatchesOpenAPI calls every operation of the document
// (and every /api/ route of the route table) and validates the real
// requests and answers, successes and errors, against the document.
func TestAPIEveryEndpointMatchesOpenAPI(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		ownerTok, tok := env.apiToken(env.ws.ID, owner.ID)
		_, viewTok := env.apiToken(env.ws.ID, viewer.ID)
		p := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }

		decode[map[string]any](t, a.get("/api/v1/openapi.json", ""), http.StatusOK)

		// Projects, with pagination.
		for _, name := range []string{"one", "two"} {
			decode[APIProject](t, a.json(http.MethodPost, "/api/v1/projects", tok, map[string]string{"name": name}), http.StatusCreated)
		}
		var names []string
		cursor := ""
		for pages := 0; pages < 10; pages++ {
			pg := decode[Page[APIProject]](t, a.get("/api/v1/projects?limit=1&cursor="+cursor, tok), http.StatusOK)
			if len(pg.Items) != 1 {
				t.Fatalf("page of %d items with limit=1", len(pg.Items))
			}
			names = append(names, pg.Items[0].Name)
			if cursor = pg.NextCursor; cursor == "" {
				break
			}
		}
		if len(names) != 3 || names[1] != "one" || names[2] != "two" {
			t.Errorf("paged projects = %v, want the demo project, one, two", names)
		}
		detail := decode[APIProjectDetail](t, a.get(p("/api/v1/projects/%d", env.project.ID), tok), http.StatusOK)
		if len(detail.Datasets) == 0 || len(detail.Rubrics) == 0 {
			t.Fatalf("demo project detail lacks datasets or rubrics: %+v", detail)
		}
		decode[Page[APIDataset]](t, a.get(p("/api/v1/projects/%d/datasets?limit=1", env.project.ID), tok), http.StatusOK)
		decode[Page[APIRubric]](t, a.get(p("/api/v1/projects/%d/rubrics?limit=1", env.project.ID), tok), http.StatusOK)

		// Upload, with the suggested mapping; the dataset; rubrics.
		up := decode[APIUpload](t, a.upload(p("/api/v1/projects/%d/uploads", env.project.ID), tok, "r.jsonl",
			`{"id":"a","text":"hello there","score":2}`+"\n"+`{"id":"b","text":"good day","score":4}`+"\n"), http.StatusCreated)
		if up.Format != "jsonl" || len(up.Preview) != 2 {
			t.Errorf("upload = %+v", up)
		}
		ds := decode[APIDataset](t, a.json(http.MethodPost, p("/api/v1/projects/%d/datasets", env.project.ID), tok,
			map[string]any{"upload_token": up.Token, "name": "suggested"}), http.StatusCreated)
		decode[APIDataset](t, a.get(p("/api/v1/datasets/%d", ds.ID), tok), http.StatusOK)
		rubric := map[string]any{"name": "R", "task": "a greeting", "criteria": []map[string]any{{"name": "Good", "lo": 1, "hi": 5}}}
		rub := decode[APIRubric](t, a.json(http.MethodPost, p("/api/v1/projects/%d/rubrics", env.project.ID), tok, rubric), http.StatusCreated)
		rubric["name"] = "R renamed"
		if got := decode[APIRubric](t, a.json(http.MethodPut, p("/api/v1/rubrics/%d", rub.ID), tok, rubric), http.StatusOK); got.Name != "R renamed" {
			t.Errorf("rubric after PUT is named %q", got.Name)
		}
		decode[APIRubric](t, a.get(p("/api/v1/rubrics/%d", rub.ID), tok), http.StatusOK)

		// Judges: the key is written, never read back.
		const secret = "sk-test-never-shown-0123456789"
		rec := a.json(http.MethodPost, "/api/v1/judges", tok, map[string]any{"name": "Real", "base_url": "https://judge.example/v1",
			"model": "m", "api_key": secret, "price_input_per_mtok": 2.5})
		j := decode[APIJudge](t, rec, http.StatusCreated)
		if !j.HasStoredKey || strings.Contains(rec.Body.String(), secret) || j.PriceInputPerMTok == nil || j.PriceOutputPerMTok != nil {
			t.Errorf("created judge = %s", rec.Body)
		}
		for _, rec := range []*httptest.ResponseRecorder{
			a.get(p("/api/v1/judges/%d", j.ID), tok),
			a.get("/api/v1/judges", viewTok),
			a.json(http.MethodPut, p("/api/v1/judges/%d", j.ID), tok, map[string]any{"name": "Real 2", "base_url": "https://judge.example/v1/chat/completions", "model": "m2"}),
		} {
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), secret) || !strings.Contains(rec.Body.String(), `"has_stored_key":true`) {
				t.Errorf("judge answer %d shows the key or loses it: %s", rec.Code, rec.Body)
			}
		}

		// Launch one method with its settings, all methods, cancel one.
		d := env.demo()
		launch := map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID}
		launch["method"], launch["settings"] = "closerlook", map[string]any{"samples": 3, "sample_temperature": 0.7}
		cl := decode[APIRun](t, a.json(http.MethodPost, p("/api/v1/projects/%d/runs", env.project.ID), tok, launch), http.StatusCreated)
		if cl.Method != "closerlook" || cl.MethodSettings.Samples != 3 || cl.MethodSettings.SampleTemperature != 0.7 {
			t.Errorf("closerlook launch = %+v", cl)
		}
		// G-Eval with typed steps for the first criterion, then cancelled.
		launch["method"], launch["settings"] = "geval", map[string]any{"use_logprobs": false, "geval_steps": map[string]string{"0": "Read the reply. Judge it."}}
		ge := decode[APIRun](t, a.json(http.MethodPost, p("/api/v1/projects/%d/runs", env.project.ID), tok, launch), http.StatusCreated)
		if ge.Method != "geval" || ge.MethodSettings.UseLogprobs || ge.MethodSettings.GEvalSteps[d.rubric.Criteria[0].Name] != "Read the reply. Judge it." ||
			len(ge.Criteria) != len(d.rubric.Criteria) {
			t.Errorf("geval launch = %+v", ge)
		}
		if rec := a.json(http.MethodPost, p("/api/v1/runs/%d/cancel", ge.ID), tok, nil); rec.Code != http.StatusOK && rec.Code != http.StatusConflict {
			t.Errorf("cancel = %d %s", rec.Code, rec.Body)
		}
		launch["method"], launch["settings"] = "batcheval", map[string]any{"rounds": 1, "batch_size": 10}
		exp := decode[APIExperiment](t, a.json(http.MethodPost, p("/api/v1/projects/%d/experiments", env.project.ID), tok, launch), http.StatusCreated)
		if len(exp.Runs) < 4 {
			t.Errorf("launch all methods made %d runs", len(exp.Runs))
		}
		launch["settings"] = map[string]any{"rounds": 5, "batch_size": 2}
		long := decode[APIRun](t, a.json(http.MethodPost, p("/api/v1/projects/%d/runs", env.project.ID), tok, launch), http.StatusCreated)
		// Paused (unless it finished first), continued, paused again and
		// cancelled: a cancelled run is not continued.
		paused := a.json(http.MethodPost, p("/api/v1/runs/%d/pause", long.ID), tok, nil)
		switch paused.Code {
		case http.StatusOK:
			if got := decode[APIRun](t, paused, http.StatusOK); got.Status != models.RunPaused || got.Finished {
				t.Errorf("pause answered status %q, finished %v; want paused, not finished", got.Status, got.Finished)
			}
			// A retried pause (its first answer lost) succeeds and changes
			// nothing: a client cannot tell "already paused" from a refusal
			// it must handle, and the run is in the state it asked for
			// (TestAPIRetriedStateChangeSucceeds). It was pinned at 409.
			if got := decode[APIRun](t, a.json(http.MethodPost, p("/api/v1/runs/%d/pause", long.ID), tok, nil), http.StatusOK); got.Status != models.RunPaused {
				t.Errorf("pausing a paused run answered status %q, want paused", got.Status)
			}
			// The answer reads the run after the continue commits: a worker
			// may already have taken it (on PostgreSQL the queue's
			// notification is that fast), so running is as right as queued,
			// and on a loaded machine the worker may even have finished its
			// few simulated batches before the answer's read.
			if got := decode[APIRun](t, a.json(http.MethodPost, p("/api/v1/runs/%d/continue", long.ID), tok, nil), http.StatusOK); got.Status != models.RunQueued && got.Status != models.RunRunning && got.Status != models.RunSucceeded {
				t.Errorf("continue answered status %q, want queued (or running or succeeded, once a worker took it)", got.Status)
			}
			if rec := a.json(http.MethodPost, p("/api/v1/runs/%d/pause", long.ID), tok, nil); rec.Code != http.StatusOK && rec.Code != http.StatusConflict {
				t.Errorf("pause again = %d %s", rec.Code, rec.Body)
			}
		case http.StatusConflict:
		default:
			t.Errorf("pause = %d %s", paused.Code, paused.Body)
		}
		if rec := a.json(http.MethodPost, p("/api/v1/runs/%d/cancel", long.ID), tok, nil); rec.Code != http.StatusOK && rec.Code != http.StatusConflict {
			t.Errorf("cancel = %d %s", rec.Code, rec.Body)
		}
		if rec := a.json(http.MethodPost, p("/api/v1/runs/%d/continue", long.ID), tok, nil); rec.Code != http.StatusConflict {
			t.Errorf("continuing a cancelled or finished run = %d %s, want 409", rec.Code, rec.Body)
		}
		for _, r := range exp.Runs {
			a.pollRun(r.Run.ID, tok, 90*time.Second)
		}
		a.pollRun(cl.ID, tok, 60*time.Second)
		decode[APIExperiment](t, a.get(p("/api/v1/experiments/%d", exp.ID), tok), http.StatusOK)
		if exps := decode[Page[APIExperimentItem]](t, a.get(p("/api/v1/experiments?project_id=%d&limit=200", env.project.ID), tok), http.StatusOK); len(exps.Items) == 0 || exps.Items[len(exps.Items)-1].ID != exp.ID {
			t.Errorf("experiments list = %+v, want experiment %d last", exps, exp.ID)
		}
		runs := decode[Page[APIRun]](t, a.get(p("/api/v1/runs?project_id=%d&limit=200", env.project.ID), tok), http.StatusOK)
		if len(runs.Items) < len(exp.Runs)+2 {
			t.Errorf("runs list has %d runs", len(runs.Items))
		}
		// Every method's results, each field of them described (the
		// document's answer schemas are closed: closeAnswerSchemas).
		for _, r := range append(exp.Runs, APIExperimentRun{Run: cl}) {
			if rec := a.get(p("/api/v1/runs/%d/results", r.Run.ID), tok); rec.Code != http.StatusOK {
				t.Errorf("results of the %s run = %d %s", r.Run.Method, rec.Code, rec.Body)
			}
		}
		first, second := exp.Runs[0].Run.ID, exp.Runs[1].Run.ID
		if rec := a.get(p("/api/v1/runs/%d/events", first), tok); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"finished":true`) {
			t.Errorf("a finished run's progress stream = %d %.300s", rec.Code, rec.Body)
		}
		results := a.get(p("/api/v1/runs/%d/results", first), tok)
		export := a.get(p("/api/v1/runs/%d/export.json", first), tok)
		var r1, r2 any
		_ = json.Unmarshal(results.Body.Bytes(), &r1)
		_ = json.Unmarshal(export.Body.Bytes(), &r2)
		if results.Code != http.StatusOK || fmt.Sprint(r1) != fmt.Sprint(r2) {
			t.Errorf("results (%d) differ from the JSON export (%d)", results.Code, export.Code)
		}
		if rec := a.get(p("/api/v1/runs/%d/export.csv", first), tok); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
			t.Errorf("CSV export = %d %s", rec.Code, rec.Header().Get("Content-Type"))
		}
		// A review of a sample the run judged, and the dataset's reviews.
		demoRows, err := env.db.ListDatasetRows(context.Background(), d.dataset.ID, 0, 1)
		if err != nil || len(demoRows) == 0 {
			t.Fatalf("demo rows: %v", err)
		}
		crit := d.rubric.Criteria[0]
		rv := decode[APIReview](t, a.json(http.MethodPost, p("/api/v1/datasets/%d/reviews", d.dataset.ID), tok,
			map[string]any{"run_id": first, "criterion": crit.Name, "sample_id": demoRows[0].ExternalID, "rating": crit.Lo, "agree": true}), http.StatusCreated)
		if rvs := decode[Page[APIReview]](t, a.get(p("/api/v1/datasets/%d/reviews", d.dataset.ID), viewTok), http.StatusOK); len(rvs.Items) != 1 || rvs.Items[0].ID != rv.ID {
			t.Errorf("reviews = %+v, want the one posted (%d)", rvs.Items, rv.ID)
		}
		cmp := decode[APIComparison](t, a.get(p("/api/v1/compare?a=%d&b=%d", first, second), tok), http.StatusOK)
		if !cmp.SameDataset || cmp.Matched == 0 || len(cmp.Rows) == 0 {
			t.Errorf("compare = %+v", cmp)
		}

		// Share links: one to a run, an experiment and a comparison; the
		// run's opens logged out until it is revoked.
		shareRun := decode[APIShareLink](t, a.json(http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "run", "run_id": first, "label": "for the manager"}), http.StatusCreated)
		if shareRun.URL == "" || !shareRun.Active || shareRun.ExpiresAt == nil || shareRun.CreatedBy != owner.Name {
			t.Errorf("run share = %+v", shareRun)
		}
		decode[APIShareLink](t, a.json(http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "experiment", "experiment_id": exp.ID, "expires_in_days": 0}), http.StatusCreated)
		decode[APIShareLink](t, a.json(http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "compare", "run_id": first, "other_run_id": second, "expires_in_days": 30}), http.StatusCreated)
		sharePath := shareRun.URL[strings.Index(shareRun.URL, "/s/"):]
		if rec := env.get(sharePath); rec.Code != http.StatusOK {
			t.Errorf("share link opened logged out = %d", rec.Code)
		}
		shares := decode[Page[APIShareLink]](t, a.get("/api/v1/shares", tok), http.StatusOK)
		if len(shares.Items) != 3 || shares.Items[0].ID != shareRun.ID || shares.Items[0].URL != "" || shares.Items[0].LastOpenedAt == nil {
			t.Errorf("share list = %+v", shares.Items)
		}
		if got := decode[APIShareLink](t, a.json(http.MethodPost, p("/api/v1/shares/%d/revoke", shareRun.ID), tok, nil), http.StatusOK); got.Active || got.RevokedAt == nil {
			t.Errorf("revoked share = %+v", got)
		}
		if rec := env.get(sharePath); rec.Code != http.StatusNotFound {
			t.Errorf("revoked share link opened = %d, want 404", rec.Code)
		}

		// Tokens: a viewer lists and revokes the token it calls with (then
		// 401); an owner lists every member's and revokes the viewer's.
		_, selfTok := env.apiToken(env.ws.ID, viewer.ID)
		mine := decode[Page[APIToken]](t, a.get("/api/v1/tokens", selfTok), http.StatusOK)
		var current *APIToken
		for i, it := range mine.Items {
			if it.UserID != viewer.ID {
				t.Errorf("viewer's token list holds a token of user %d", it.UserID)
			}
			if it.Current {
				current = &mine.Items[i]
			}
		}
		if current == nil {
			t.Fatalf("viewer's token list marks no token as current: %+v", mine.Items)
		}
		decode[APIToken](t, a.json(http.MethodPost, p("/api/v1/tokens/%d/revoke", current.ID), selfTok, nil), http.StatusOK)
		if rec := a.get("/api/v1/projects", selfTok); rec.Code != http.StatusUnauthorized {
			t.Errorf("call with a token revoked through the API = %d, want 401", rec.Code)
		}
		victim, victimTok := env.apiToken(env.ws.ID, viewer.ID)
		all := decode[Page[APIToken]](t, a.get("/api/v1/tokens", tok), http.StatusOK)
		seen := false
		for _, it := range all.Items {
			seen = seen || it.ID == victim.ID
		}
		if !seen {
			t.Errorf("owner's token list lacks the viewer's token %d", victim.ID)
		}
		if rec := a.json(http.MethodPost, p("/api/v1/tokens/%d/revoke", victim.ID), viewTok, nil); rec.Code != http.StatusOK {
			t.Errorf("viewer revoking own second token = %d", rec.Code)
		}
		victim2, victimTok2 := env.apiToken(env.ws.ID, viewer.ID)
		if got := decode[APIToken](t, a.json(http.MethodPost, p("/api/v1/tokens/%d/revoke", victim2.ID), tok, nil), http.StatusOK); got.RevokedAt == nil || got.UserName != viewer.Name {
			t.Errorf("owner revoking a member's token = %+v", got)
		}
		for _, vt := range []string{victimTok, victimTok2} {
			if rec := a.get("/api/v1/projects", vt); rec.Code != http.StatusUnauthorized {
				t.Errorf("revoked member token still works: %d", rec.Code)
			}
		}

		// Errors: one shape, the right statuses.
		errorCases := []struct {
			name, method, target, token string
			body                        any
			want                        int
			code                        string
			// invalid: the request breaks the document on purpose.
			invalid bool
		}{
			{"no token", http.MethodGet, "/api/v1/projects", "", nil, http.StatusUnauthorized, models.EUnauthorized, false},
			{"unknown token", http.MethodGet, "/api/v1/projects", models.TokenPrefix + "nope", nil, http.StatusUnauthorized, models.EUnauthorized, false},
			{"viewer writes", http.MethodPost, "/api/v1/projects", viewTok, map[string]string{"name": "x"}, http.StatusForbidden, "forbidden", false},
			{"viewer manages judges", http.MethodPost, "/api/v1/judges", viewTok, map[string]string{"name": "x"}, http.StatusForbidden, "forbidden", false},
			{"unknown run", http.MethodGet, "/api/v1/runs/999999", tok, nil, http.StatusNotFound, models.ENotFound, false},
			{"bad limit", http.MethodGet, "/api/v1/runs?limit=0", tok, nil, http.StatusUnprocessableEntity, models.EInvalid, true},
			{"limit not a number", http.MethodGet, "/api/v1/runs?limit=abc", tok, nil, http.StatusUnprocessableEntity, models.EInvalid, true},
			{"unknown field", http.MethodPost, "/api/v1/projects", tok, map[string]string{"name": "x", "colour": "red"}, http.StatusBadRequest, "bad_request", true},
			{"empty name", http.MethodPost, "/api/v1/projects", tok, map[string]string{"name": " "}, http.StatusUnprocessableEntity, models.EInvalid, false},
			{"bad range", http.MethodPost, p("/api/v1/projects/%d/rubrics", env.project.ID), tok,
				map[string]any{"name": "R", "task": "t", "criteria": []map[string]any{{"name": "C", "lo": 5, "hi": 1}}}, http.StatusUnprocessableEntity, models.EInvalid, false},
			{"launch refused", http.MethodPost, p("/api/v1/projects/%d/runs", env.project.ID), tok,
				map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "settings": map[string]any{"rounds": 0}}, http.StatusUnprocessableEntity, models.EInvalid, false},
			{"unknown criterion", http.MethodPost, p("/api/v1/projects/%d/runs", env.project.ID), tok,
				map[string]any{"dataset_id": d.dataset.ID, "rubric_id": d.rubric.ID, "judge_id": d.judge.ID, "criteria": []int{0, 9}}, http.StatusUnprocessableEntity, models.EInvalid, false},
			{"viewer shares", http.MethodPost, "/api/v1/shares", viewTok, map[string]any{"kind": "run", "run_id": first}, http.StatusForbidden, "forbidden", false},
			{"share of nothing", http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "run", "run_id": 999999}, http.StatusNotFound, models.ENotFound, false},
			{"share expiry", http.MethodPost, "/api/v1/shares", tok, map[string]any{"kind": "run", "run_id": first, "expires_in_days": 400}, http.StatusUnprocessableEntity, models.EInvalid, true},
			{"viewer revokes owner's token", http.MethodPost, p("/api/v1/tokens/%d/revoke", ownerTok.ID), viewTok, nil, http.StatusNotFound, models.ENotFound, false},
			{"who am I", http.MethodGet, "/api/v1/account", viewTok, nil, http.StatusOK, "", false},
			{"viewer's token renames", http.MethodPatch, "/api/v1/account", viewTok, map[string]string{"name": "x"}, http.StatusForbidden, "forbidden", false},
			{"compare across methods", http.MethodGet, p("/api/v1/compare?a=%d&b=%d", first, cl.ID), tok, nil, http.StatusOK, "", false},
		}
		for _, tc := range errorCases {
			a.invalidRequests = tc.invalid
			rec := a.json(tc.method, tc.target, tc.token, tc.body)
			a.invalidRequests = false
			if rec.Code != tc.want {
				t.Errorf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
				continue
			}
			if tc.code != "" {
				if got := errorCode(t, rec); got != tc.code {
					t.Errorf("%s: code %q, want %q", tc.name, got, tc.code)
				}
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: 401 without WWW-Authenticate: Bearer", tc.name)
			}
		}
		if rec := a.upload(p("/api/v1/projects/%d/uploads", env.project.ID), tok, "bad.csv", "a,b\n\"unclosed\n"); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("broken upload = %d", rec.Code)
		} else {
			errorCode(t, rec)
		}
		// A refused header row is explained in the API's own terms: it has
		// no "The first row is data" checkbox (QA: the answer said to tick it).
		if rec := a.upload(p("/api/v1/projects/%d/uploads", env.project.ID), tok, "dup.csv", "3,3,x\n4,5,y\n"); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("upload with a repeated header name = %d", rec.Code)
		} else if body := rec.Body.String(); !strings.Contains(body, "header row of unique column names") || strings.Contains(body, "ticked") {
			t.Errorf("upload with a repeated header name answers %s, want the header row's rule and no checkbox", body)
		}

		// Every operation of the document, and every API route, was called.
		var missing []string
		for path, item := range a.doc.Paths.Map() {
			for method := range item.Operations() {
				if len(a.seen[method+" "+path]) == 0 {
					missing = append(missing, method+" "+path)
				}
			}
		}
		documented := map[string]bool{}
		for path, item := range a.doc.Paths.Map() {
			for method := range item.Operations() {
				documented[method+" "+strings.ReplaceAll(path, "{id}", ":id")] = true
			}
		}
		for _, r := range env.h.routes() {
			if strings.HasPrefix(r.Path, "/api/") && !documented[r.Method+" "+r.Path] {
				missing = append(missing, r.Method+" "+r.Path+" (route not in the document)")
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("not called or not documented: %v", missing)
		}
	})
}

// TestAPICrossOrigin: a bearer-token request is not held to the browser's
// same-origin rule (it carries no ambient credential), a session cookie
// does not authenticate the API at all, and the local user's API writes
// keep the same-origin check.
func TestAPICrossOrigin(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		body := `{"name":"from a script"}`
		post := func(site string, auth string, cookie *http.Cookie) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/projects", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if site != "" {
				req.Header.Set("Sec-Fetch-Site", site)
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			if cookie != nil {
				req.AddCookie(cookie)
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec
		}
		// Local mode (no account yet): the API needs no token on loopback,
		// so a cross-site page must not reach it through the browser.
		if rec := post("cross-site", "", nil); rec.Code != http.StatusForbidden {
			t.Errorf("local mode, cross-site = %d, want 403", rec.Code)
		} else if errorCode(t, rec) != "forbidden" {
			t.Errorf("cross-site refusal is not the JSON error shape")
		}
		if rec := post("same-origin", "", nil); rec.Code != http.StatusCreated {
			t.Errorf("local mode, same-origin = %d, want 201: %s", rec.Code, rec.Body)
		}

		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		cookie := env.sessionCookie(editor)
		tests := []struct {
			name, site, auth string
			cookie           *http.Cookie
			want             int
		}{
			{"token, cross-site", "cross-site", "Bearer " + tok, nil, http.StatusCreated},
			{"token, no fetch metadata", "", "Bearer " + tok, nil, http.StatusCreated},
			{"session cookie, same-origin", "same-origin", "", cookie, http.StatusUnauthorized},
			{"session cookie, cross-site", "cross-site", "", cookie, http.StatusForbidden},
			{"empty bearer with a cookie", "same-origin", "Bearer ", cookie, http.StatusUnauthorized},
		}
		for _, tc := range tests {
			if rec := post(tc.site, tc.auth, tc.cookie); rec.Code != tc.want {
				t.Errorf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
			}
		}
		// The bearer exemption is the API's only: a page post with an
		// Authorization header still gets the same-origin check.
		req := httptest.NewRequest(http.MethodPost, "/projects", strings.NewReader("name=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.AddCookie(cookie)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("cross-site page post with a bearer header = %d, want 403", rec.Code)
		}
	})
}
