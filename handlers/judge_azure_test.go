package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// fakeAzureJudge is an Azure OpenAI resource with one deployment, as its
// classic per-deployment endpoint is called: POST
// /openai/deployments/<deployment>/chat/completions?api-version=<version>
// with the key in the api-key header. It refuses anything else as Azure
// does (404 another path or version, 400 no api-version, 401 no api-key,
// a Bearer token included) and answers the rest with the simulated judge.
// seen lists every request it got: method, path and query, and the key
// headers.
func fakeAzureJudge(t *testing.T, deployment, version, key string) (baseURL string, seen func() []string) {
	t.Helper()
	sim := simjudge.NewHandler(simjudge.Options{Seed: 3})
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s api-key=%q authorization=%q", r.Method, r.URL.RequestURI(), r.Header.Get("api-key"), r.Header.Get("Authorization")))
		mu.Unlock()
		refuse := func(code int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": fmt.Sprint(code), "message": msg}})
		}
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/openai/deployments/"+deployment+"/chat/completions":
			refuse(http.StatusNotFound, "Resource not found")
		case r.URL.Query().Get("api-version") == "":
			refuse(http.StatusBadRequest, "Missing API version")
		case r.URL.Query().Get("api-version") != version:
			refuse(http.StatusNotFound, "Resource not found")
		case r.Header.Get("api-key") != key || r.Header.Get("Authorization") != "":
			refuse(http.StatusUnauthorized, "Access denied due to invalid subscription key or wrong API endpoint.")
		default:
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawQuery = "/v1/chat/completions", ""
			sim.ServeHTTP(w, r2)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/openai/deployments/" + deployment + "?api-version=" + version, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestAzureDeploymentJudgeRunsEndToEnd: a judge on Azure OpenAI's classic
// per-deployment address, saved with the form (?api-version= in its base
// URL, the key typed and sent in the api-key header), passes Test
// connection and judges a whole run: every request reaches the
// deployment's chat path with the api-version and the key as Azure wants
// them. The key is stored encrypted and shown nowhere; the judge's page,
// the API and the run's judge say how the key is sent. Before, the query
// string was dropped from every call and the key could only go as a
// Bearer token, so Azure refused them all, and the Azure preset said so.
func TestAzureDeploymentJudgeRunsEndToEnd(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const key, version = "az-s3cret-key-77", "2024-10-21"
		baseURL, seen := fakeAzureJudge(t, "judge-4o", version, key)

		// The preset fills in the address's shape and the header.
		preset := env.get("/judges/new?preset=" + strings.ReplaceAll("Azure OpenAI (per deployment)", " ", "%20")).Body.String()
		for _, want := range []string{"/openai/deployments/YOUR-DEPLOYMENT?api-version=", `value="api-key" selected`, "api-key header"} {
			if !strings.Contains(preset, want) {
				t.Errorf("the per-deployment preset's form lacks %q", want)
			}
		}

		form := judgeFormValues("Azure deployment", baseURL, key, "")
		form.Set("key_header", "api-key")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("save: %d %.500s", rec.Code, rec.Body)
		}
		j, ok := env.judgeNamed("Azure deployment")
		if !ok {
			t.Fatal("the judge was not stored")
		}
		if j.KeyHeader != "api-key" || j.BaseURL != baseURL || j.APIKey != key || strings.Contains(j.SealedKey, key) {
			t.Fatalf("stored key header %q, base URL %q, key opened %v, sealed %v; want api-key, the address as typed, the key encrypted",
				j.KeyHeader, j.BaseURL, j.APIKey == key, !strings.Contains(j.SealedKey, key))
		}
		id := itoa(j.ID)

		test := httptest.NewRequest(http.MethodPost, "/judges/"+id+"/test", nil)
		test.Header.Set("X-Requested-With", "fetch")
		testRec := httptest.NewRecorder()
		env.e.ServeHTTP(testRec, test)
		if b := testRec.Body.String(); !strings.Contains(b, "flash ok") {
			t.Fatalf("Test connection failed: %.600s\nAzure saw %q", b, seen())
		}

		d := env.demo()
		d.judge = j
		runID := env.launch(d.launchForm("1", "10"))
		run := env.waitRun(runID, 60*time.Second)
		if run.Status != models.RunSucceeded || run.Calls == 0 {
			t.Fatalf("run %s after %d calls (%s), want succeeded; Azure saw %q", run.Status, run.Calls, run.Error, seen())
		}
		chat := 0
		for _, r := range seen() {
			wantChat := fmt.Sprintf("POST /openai/deployments/judge-4o/chat/completions?api-version=%s api-key=%q authorization=\"\"", version, key)
			if r == wantChat {
				chat++
				continue
			}
			// Nothing else: not the model list a deployment does not have
			// (TestJudgeTestSaysWhenTheEndpointListsNoModels).
			t.Errorf("Azure got %s", r)
		}
		if chat != run.Calls+1 {
			t.Errorf("Azure answered %d chat calls, want the run's %d and the test's", chat, run.Calls)
		}

		// Shown as sent, the key never.
		pages := map[string]string{
			"edit form":   env.get("/judges/" + id + "/edit").Body.String(),
			"judges page": env.get("/judges").Body.String(),
			"API judge":   env.get("/api/v1/judges/" + id).Body.String(),
			"API run":     env.get("/api/v1/runs/" + itoa(runID)).Body.String(),
		}
		wants := map[string]string{
			"edit form":   `value="api-key" selected`,
			"judges page": "sent as api-key header",
			"API judge":   `"key_header":"api-key"`,
			"API run":     `"key_header":"api-key"`,
		}
		for what, b := range pages {
			if strings.Contains(b, key) {
				t.Errorf("%s shows the key", what)
			}
			if !strings.Contains(b, wants[what]) {
				t.Errorf("%s lacks %s: %.400s", what, wants[what], b)
			}
			if !strings.Contains(b, "api-version="+version) {
				t.Errorf("%s does not show the base URL's api-version", what)
			}
		}
		if got, err := env.db.GetRun(ctx, runID); err != nil || got.JudgeSnapshot.KeyHeader != "api-key" {
			t.Errorf("the run recorded key header %q (%v), want api-key", got.JudgeSnapshot.KeyHeader, err)
		}
	})
}

// TestJudgeKeyHeaderSetting: the form and the API take "bearer" and
// "api-key" and refuse anything else beside the field, naming both; a
// judge saved without one sends a Bearer token; the API's update without
// key_header keeps the judge's.
func TestJudgeKeyHeaderSetting(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		form := judgeFormValues("Header judge", "https://llm.example/v1", "", "")
		form.Set("key_header", "x-api-key")
		rec := env.postForm("/judges", form)
		if b := rec.Body.String(); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(b, `data-testid="field-error-judge-key-header"`) ||
			!strings.Contains(b, "bearer") || !strings.Contains(b, "api-key") {
			t.Errorf("form with key header x-api-key = %d %.400s, want 422 beside the field naming both", rec.Code, b)
		}
		form.Del("key_header")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("form without key header = %d", rec.Code)
		}
		if j, _ := env.judgeNamed("Header judge"); j.KeyHeader != "bearer" {
			t.Errorf("a judge saved without a key header has %q, want bearer", j.KeyHeader)
		}

		api := func(method, path string, body map[string]any) *httptest.ResponseRecorder {
			b, _ := json.Marshal(body)
			return env.do(method, path, bytes.NewReader(b), echo.MIMEApplicationJSON)
		}
		if rec := api(http.MethodPost, "/api/v1/judges", map[string]any{"name": "API header", "base_url": "https://llm.example/v1", "model": "m", "key_header": "basic"}); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("API with key header basic = %d, want 422", rec.Code)
		}
		rec = api(http.MethodPost, "/api/v1/judges", map[string]any{"name": "API header", "base_url": "https://llm.example/v1?api-version=1", "model": "m", "key_header": "api-key"})
		if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"key_header":"api-key"`) {
			t.Fatalf("API create = %d %.300s", rec.Code, rec.Body)
		}
		var created struct{ ID int64 }
		_ = json.Unmarshal(rec.Body.Bytes(), &created)
		rec = api(http.MethodPut, "/api/v1/judges/"+itoa(created.ID), map[string]any{"name": "API header", "base_url": "https://llm.example/v1?api-version=2", "model": "m"})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"key_header":"api-key"`) {
			t.Errorf("API update without key_header = %d %.300s, want it kept", rec.Code, rec.Body)
		}
	})
}

// TestJudgeTestSaysWhenTheEndpointListsNoModels: Test connection on an
// Azure OpenAI deployment's address does not ask for a model list (Azure
// has none there), and on an endpoint answering 404 for it says so as a
// fact, not a failure: the result says the context window cannot be read
// and where to enter it, and nothing is logged. The old code sent Azure
// the request, got its 404 and logged it, and the page said nothing.
func TestJudgeTestSaysWhenTheEndpointListsNoModels(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const key, version = "az-s3cret-key-78", "2024-10-21"
		azure, seen := fakeAzureJudge(t, "judge-4o", version, key)
		noList := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Float Scores: [Sample1:4]"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
		}))
		defer noList.Close()
		var logs bytes.Buffer
		env.h.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		window := func(n int) *int { return &n }
		for _, tc := range []struct {
			name, baseURL, keyHeader string
			window                   *int
			want                     string
		}{
			{"Azure deployment", azure, "api-key", nil, "An Azure OpenAI deployment's address has no model list, so Test connection cannot read the model's context window: enter it under Context window"},
			{"Azure deployment with a window", azure, "api-key", window(128000), "An Azure OpenAI deployment's address has no model list, so Test connection cannot check the Context window set on this judge (128,000 tokens)"},
			{"404 for the list", noList.URL + "/v1", "bearer", nil, "This endpoint does not list its models (it answered 404 for the list), so Test connection cannot read the model's context window"},
		} {
			logs.Reset()
			j := models.Judge{WorkspaceID: env.ws.ID, Name: tc.name, BaseURL: tc.baseURL, Model: "m", APIKey: key, KeyHeader: tc.keyHeader,
				TimeoutSeconds: 5, Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, ContextTokens: tc.window}
			must(t, env.db.SaveJudge(context.Background(), &j))
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			req.Header.Set("X-Requested-With", "fetch")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			body := rec.Body.String()
			if !strings.Contains(body, "flash ok") {
				t.Fatalf("%s: the test failed: %.600s", tc.name, body)
			}
			if !strings.Contains(body, `data-testid="judge-context-hint"`) || !strings.Contains(body, templ.EscapeString(tc.want)) {
				t.Errorf("%s: the result lacks %q: %.800s", tc.name, tc.want, body)
			}
			if strings.Contains(logs.String(), "model list") {
				t.Errorf("%s: logged %s", tc.name, logs.String())
			}
		}
		for _, r := range seen() {
			if strings.Contains(r, "/models") {
				t.Errorf("Azure was asked for a model list: %s", r)
			}
		}
		if b := env.get("/judges/new").Body.String(); !strings.Contains(b, "an Azure OpenAI per-deployment address has no model list, so enter it yourself") {
			t.Errorf("the judge form's Context window help does not say Azure's deployments list no models")
		}
	})
}
