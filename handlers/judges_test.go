package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// judgeFormValues is a complete judge form.
func judgeFormValues(name, baseURL, key, priceIn string) url.Values {
	return url.Values{
		"name": {name}, "base_url": {baseURL}, "model": {"gpt-4o-mini"}, "api_key": {key}, "api_key_env": {""},
		"temperature": {"0.2"}, "top_p": {"0.9"}, "max_concurrency": {"3"}, "timeout_seconds": {"60"},
		"price_input": {priceIn}, "price_output": {"0.6"},
	}
}

// judgeNamed finds a judge of the workspace by name.
func (env *testEnv) judgeNamed(name string) (models.Judge, bool) {
	env.t.Helper()
	js, err := env.db.ListJudges(context.Background(), env.ws.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	for _, j := range js {
		if j.Name == name {
			// FindJudge, unlike the list, opens the sealed key.
			j, err := env.db.FindJudge(context.Background(), env.ws.ID, j.ID)
			if err != nil {
				env.t.Fatal(err)
			}
			return j, true
		}
	}
	return models.Judge{}, false
}

// simulatedJudge returns the seeded simulated judge.
func (env *testEnv) simulatedJudge() models.Judge {
	env.t.Helper()
	j, err := env.db.EnsureSimulatedJudge(context.Background(), env.ws.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	return j
}

// closedPortURL is the base URL of a local port nothing listens on.
func closedPortURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestJudgeKeyIsNeverShown(t *testing.T) {
	const secret = "sk-test-VERY-SECRET-4242"
	eachDB(t, func(t *testing.T, env *testEnv) {
		rec := env.postForm("/judges", judgeFormValues("Hosted", "https://api.example.com/v1", secret, "0.15"))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST /judges = %d: %s", rec.Code, rec.Body)
		}
		j, ok := env.judgeNamed("Hosted")
		if !ok || j.APIKey != secret {
			t.Fatalf("judge stored = %v, key stored = %v", ok, j.APIKey == secret)
		}
		// An edit with an empty key keeps it; a failed edit does not echo it.
		keep := judgeFormValues("Hosted", "https://api.example.com/v1", "", "0.15")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), keep); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST edit = %d: %s", rec.Code, rec.Body)
		}
		if j2, _ := env.judgeNamed("Hosted"); j2.APIKey != secret {
			t.Errorf("an empty key field replaced the stored key")
		}
		bad := judgeFormValues("Hosted", "https://api.example.com/v1", secret+"-new", "free")
		failed := env.postForm(fmt.Sprintf("/judges/%d", j.ID), bad)

		tests := []struct {
			name       string
			rec        *httptest.ResponseRecorder
			wantStatus int
			want       string
		}{
			{"list", env.get("/judges"), http.StatusOK, "key: stored"},
			{"edit page", env.get(fmt.Sprintf("/judges/%d/edit", j.ID)), http.StatusOK, "A key is stored"},
			{"failed edit", failed, http.StatusUnprocessableEntity, "type it again"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.rec.Code != tt.wantStatus {
					t.Fatalf("status = %d, want %d", tt.rec.Code, tt.wantStatus)
				}
				body := tt.rec.Body.String()
				if strings.Contains(body, "VERY-SECRET") {
					t.Errorf("the page shows the API key")
				}
				if !strings.Contains(body, tt.want) {
					t.Errorf("page lacks %q:\n%s", tt.want, body)
				}
			})
		}
	})
}

func TestJudgeForm(t *testing.T) {
	serialTest(t) // sets environment variables
	eachDB(t, func(t *testing.T, env *testEnv) {
		t.Setenv("JUDGE_TEST_API_KEY", "")
		t.Setenv(models.KeyVarsSetting, "OTHER_KEY,JUDGE_TEST_API_KEY")
		withEnv := judgeFormValues("From env", "http://localhost:11434/v1", "", "")
		withEnv.Set("api_key_env", "$JUDGE_TEST_API_KEY")
		tests := []struct {
			name       string
			form       url.Values
			wantStatus int
			want       string // on the judges list, or on the refused form
		}{
			{"unknown price", judgeFormValues("Local", "http://localhost:11434/v1", "", ""), http.StatusSeeOther, "unknown"},
			{"key from env", withEnv, http.StatusSeeOther, "key from $JUDGE_TEST_API_KEY"},
			{"no base URL", judgeFormValues("Nowhere", "", "", ""), http.StatusUnprocessableEntity, "needs a base URL"},
			{"negative price", judgeFormValues("Cheap", "http://x/v1", "", "-1"), http.StatusUnprocessableEntity, "is not a number of dollars"},
			{"temperature too high", func() url.Values {
				f := judgeFormValues("Hot", "http://x/v1", "", "")
				f.Set("temperature", "3")
				return f
			}(), http.StatusUnprocessableEntity, "from 0 to 2"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.postForm("/judges", tt.form)
				if rec.Code != tt.wantStatus {
					t.Fatalf("POST /judges = %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
				}
				body := rec.Body.String()
				if rec.Code == http.StatusSeeOther {
					body = env.get("/judges").Body.String()
				}
				if !strings.Contains(body, tt.want) {
					t.Errorf("page lacks %q:\n%s", tt.want, body)
				}
			})
		}
		local, ok := env.judgeNamed("Local")
		if !ok {
			t.Fatal("judge Local not stored")
		}
		if local.PriceInputPerMTok != nil {
			t.Errorf("empty input price stored as %v, want nil (unknown)", *local.PriceInputPerMTok)
		}
		if local.PriceOutputPerMTok == nil || *local.PriceOutputPerMTok != 0.6 {
			t.Errorf("output price = %v, want 0.6", local.PriceOutputPerMTok)
		}
	})
}

func TestJudgePresetsAndSimulated(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		sim := env.simulatedJudge()
		tests := []struct {
			path       string
			wantStatus int
			want       []string
		}{
			{"/judges", http.StatusOK, []string{"simulated judge", `<option value="OpenAI">`, "no key needed"}},
			{"/judges/new?preset=OpenAI", http.StatusOK, []string{`value="https://api.openai.com/v1"`, `value="gpt-4o-mini"`, `value="OPENAI_API_KEY"`}},
			{"/judges/new", http.StatusOK, []string{`name="base_url" value=""`, `type="password"`}},
			{"/judges/new?preset=Nope", http.StatusNotFound, []string{"no preset named"}},
			{fmt.Sprintf("/judges/%d/edit", sim.ID), http.StatusOK, []string{"Only how many calls", `name="max_concurrency"`}},
		}
		for _, tt := range tests {
			rec := env.get(tt.path)
			if rec.Code != tt.wantStatus {
				t.Errorf("GET %s = %d, want %d", tt.path, rec.Code, tt.wantStatus)
				continue
			}
			if missing := bodyLacks(rec.Body.String(), tt.want...); len(missing) > 0 {
				t.Errorf("GET %s lacks %q", tt.path, missing)
			}
		}
		// The simulated judge takes a new concurrency and nothing else.
		form := judgeFormValues("Renamed", "http://evil.example/v1", "sk-x", "")
		form.Set("max_concurrency", "7")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", sim.ID), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST simulated = %d: %s", rec.Code, rec.Body)
		}
		got := env.simulatedJudge()
		if got.MaxConcurrency != 7 || got.Name != sim.Name || got.BaseURL != sim.BaseURL || got.APIKey != "" {
			t.Errorf("simulated judge after edit: concurrency %d, name %q, base URL %q, key stored %v",
				got.MaxConcurrency, got.Name, got.BaseURL, got.APIKey != "")
		}
	})
}

func TestJudgeTestConnection(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		closed := models.Judge{WorkspaceID: env.ws.ID, Name: "Closed port", BaseURL: closedPortURL(t), Model: "m", TimeoutSeconds: 5}
		if err := env.db.SaveJudge(context.Background(), &closed); err != nil {
			t.Fatal(err)
		}
		sim := env.simulatedJudge()
		tests := []struct {
			name  string
			judge int64
			fetch bool
			want  string // in the fragment, or in the flash on the next page
			ok    bool
		}{
			{"simulated, fetch", sim.ID, true, "answered in", true},
			{"closed port, fetch", closed.ID, true, "could not reach the endpoint", false},
			{"simulated, form", sim.ID, false, "answered in", true},
			{"closed port, form", closed.ID, false, "could not reach the endpoint", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", tt.judge), nil)
				if tt.fetch {
					req.Header.Set("X-Requested-With", "fetch")
				}
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				var got string
				if tt.fetch {
					if rec.Code != http.StatusOK {
						t.Fatalf("status = %d, want 200", rec.Code)
					}
					got = rec.Body.String()
					if gotOK := strings.Contains(got, "flash ok"); gotOK != tt.ok {
						t.Errorf("success shown = %v, want %v: %s", gotOK, tt.ok, got)
					}
				} else {
					if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/judges" {
						t.Fatalf("status = %d to %q, want 303 to /judges", rec.Code, rec.Header().Get("Location"))
					}
					// Follow the redirect with the flash cookie: the message
					// must show on the next page.
					next := httptest.NewRequest(http.MethodGet, "/judges", nil)
					for _, ck := range rec.Result().Cookies() {
						next.AddCookie(ck)
					}
					page := httptest.NewRecorder()
					env.e.ServeHTTP(page, next)
					got = page.Body.String()
					if gotOK := strings.Contains(got, "flash ok"); gotOK != tt.ok {
						t.Errorf("success flash shown = %v, want %v", gotOK, tt.ok)
					}
				}
				if !strings.Contains(got, tt.want) {
					t.Errorf("result lacks %q: %s", tt.want, got)
				}
			})
		}
	})
}

// TestJudgeFormRefusesUnsafeOrNonFiniteInput: a key variable that is not a
// key (it would send a server secret to the judge's URL), and NaN/Inf
// numbers, are refused with a message and nothing is stored.
func TestJudgeFormRefusesUnsafeOrNonFiniteInput(t *testing.T) {
	t.Setenv(models.KeyVarsSetting, "OPENAI_API_KEY")
	eachDB(t, func(t *testing.T, env *testEnv) {
		base := url.Values{"name": {"x"}, "base_url": {"http://127.0.0.1:9/v1"}, "model": {"m"},
			"temperature": {"0.2"}, "top_p": {"0.9"}, "max_concurrency": {"2"}, "timeout_seconds": {"30"}}
		for _, tc := range []struct{ field, value, want string }{
			{"api_key_env", "DATABASE_URL", "not allowed"},
			{"api_key_env", "HOME", "not allowed"},
			// Looks like a key, but the operator did not list it.
			{"api_key_env", "AWS_SECRET_ACCESS_KEY", "must list it in BATCHEVAL_JUDGE_KEY_VARS"},
			{"temperature", "NaN", "temperature"},
			{"top_p", "NaN", "top p"},
			{"price_input", "Inf", "price"},
		} {
			before, _ := env.db.ListJudges(t.Context(), env.ws.ID)
			form := url.Values{}
			for k, v := range base {
				form[k] = v
			}
			form.Set(tc.field, tc.value)
			rec := env.postForm("/judges", form)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s=%s: status %d, want 422 mentioning %q", tc.field, tc.value, rec.Code, tc.want)
			}
			after, _ := env.db.ListJudges(t.Context(), env.ws.ID)
			if len(after) != len(before) {
				t.Errorf("%s=%s: a judge was stored", tc.field, tc.value)
			}
		}
	})
}

// TestJudgeTestTellsTheStatedContextWindow: "Test connection" reads the
// context window the endpoint's model list states (vLLM's max_model_len)
// and suggests it when the judge has none set, or another one; a judge
// set to it gets no hint.
func TestJudgeTestTellsTheStatedContextWindow(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/v1/models":
				fmt.Fprint(w, `{"object":"list","data":[{"id":"local-judge","object":"model","max_model_len":32768}]}`)
			case "/v1/chat/completions":
				fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"local-judge","choices":[{"index":0,"message":{"role":"assistant","content":"Float Scores: [Sample1:4]"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		window := func(n int) *int { return &n }
		for _, tc := range []struct {
			name   string
			window *int
			want   string
		}{
			{"none set", nil, "The endpoint states a context window of 32,768 tokens for local-judge: enter it under Context window"},
			{"another set", window(4096), "32,768 tokens for local-judge, not the 4,096 set on this judge"},
			{"the same set", window(32768), ""},
		} {
			j := models.Judge{WorkspaceID: env.ws.ID, Name: "vLLM " + tc.name, BaseURL: srv.URL + "/v1", Model: "local-judge", TimeoutSeconds: 5,
				Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, ContextTokens: tc.window}
			if err := env.db.SaveJudge(context.Background(), &j); err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			req.Header.Set("X-Requested-With", "fetch")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			body := rec.Body.String()
			if !strings.Contains(body, "flash ok") {
				t.Fatalf("%s: the test failed: %s", tc.name, body)
			}
			hinted := strings.Contains(body, "judge-context-hint")
			if tc.want == "" && hinted {
				t.Errorf("%s: a hint for a judge already set right: %s", tc.name, body)
			}
			if tc.want != "" && !strings.Contains(body, templ.EscapeString(tc.want)) {
				t.Errorf("%s: lacks %q: %s", tc.name, tc.want, body)
			}
		}
	})
}

// TestJudgeBaseURLHoldsNoCredentials: a base URL with a user name and
// password in it (http://user:secret@host/v1) is refused by the form and
// the API, naming the field and where a key goes. It was stored as typed
// and shown to every viewer on the judges page and by GET /api/v1/judges,
// where the stored key itself never shows.
func TestJudgeBaseURLHoldsNoCredentials(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, baseURL string
			refused       bool
		}{
			{"user and password", "https://svc:s3cr3t-pw@llm.example/v1", true},
			{"user alone", "https://svc@llm.example/v1", true},
			{"plain", "https://llm.example/v1", false},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				page := env.postForm("/judges", judgeFormValues("page judge "+itoa(int64(i)), tc.baseURL, "", ""))
				body, _ := json.Marshal(map[string]any{"name": "api judge " + itoa(int64(i)), "base_url": tc.baseURL, "model": "m"})
				api := env.do(http.MethodPost, "/api/v1/judges", bytes.NewReader(body), echo.MIMEApplicationJSON)
				if !tc.refused {
					if page.Code != http.StatusSeeOther || api.Code != http.StatusCreated {
						t.Errorf("form %d, API %d, want 303 and 201", page.Code, api.Code)
					}
					return
				}
				for what, rec := range map[string]*httptest.ResponseRecorder{"form": page, "API": api} {
					if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "base URL must not hold a user name or password") {
						t.Errorf("%s: %d %.300s, want 422 naming the base URL", what, rec.Code, rec.Body)
					}
				}
				for _, n := range []string{"page judge ", "api judge "} {
					if _, ok := env.judgeNamed(n + itoa(int64(i))); ok {
						t.Errorf("%q was stored", n+itoa(int64(i)))
					}
				}
			})
		}
	})
}
