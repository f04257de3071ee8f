package handlers

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestJudgeBaseURLRefusesCredentialParams: a base URL with a credential in
// its query string (?api_key=, ?key=, ?token=, Azure's SAS sig=...) is
// refused by the form and the API, naming the field and the parameter and
// pointing to API key, as a user name and password in the address are.
// It was stored and shown to every viewer on the judges page and by GET
// /api/v1/judges. A query string without one (Azure's ?api-version=) is
// still accepted.
func TestJudgeBaseURLRefusesCredentialParams(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, query, param string // param: "" when accepted
		}{
			{"api_key", "?api_key=sk-s3cr3t", "api_key"},
			{"key", "?key=AIzaS3cr3t", "key"},
			{"token", "?token=t0k3n", "token"},
			{"access_token", "?access_token=t0k3n", "access_token"},
			{"api-key beside api-version", "?api-version=2024-06-01&api-key=s3cr3t", "api-key"},
			{"Azure SAS signature", "?sv=2022-11-02&sig=abc%2Bdef", "sig"},
			{"api-version alone", "?api-version=2024-06-01", ""},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				baseURL := "https://llm.example/v1" + tc.query
				page := env.postForm("/judges", judgeFormValues("qs page judge "+itoa(int64(i)), baseURL, "", ""))
				body, _ := json.Marshal(map[string]any{"name": "qs api judge " + itoa(int64(i)), "base_url": baseURL, "model": "m"})
				api := env.do(http.MethodPost, "/api/v1/judges", bytes.NewReader(body), echo.MIMEApplicationJSON)
				if tc.param == "" {
					if page.Code != http.StatusSeeOther || api.Code != http.StatusCreated {
						t.Errorf("form %d, API %d, want 303 and 201", page.Code, api.Code)
					}
					return
				}
				for what, rec := range map[string]*httptest.ResponseRecorder{"form": page, "API": api} {
					b := rec.Body.String()
					if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(b, "base URL must not hold a credential in its query string") ||
						!strings.Contains(b, tc.param+"=…") || !strings.Contains(b, "API key") {
						t.Errorf("%s: %d %.400s, want 422 naming the base URL, %s and API key", what, rec.Code, b, tc.param)
					}
				}
				for _, n := range []string{"qs page judge ", "qs api judge "} {
					if _, ok := env.judgeNamed(n + itoa(int64(i))); ok {
						t.Errorf("%q was stored", n+itoa(int64(i)))
					}
				}
			})
		}
	})
}

// TestStoredBaseURLCredentialsNeverShown: a judge stored before base URLs
// with credentials were refused (a user name and password, a key in the
// query string or in the fragment) keeps them stored, and calls still use them, but no page,
// API answer or message shows them: every member read them on the judges
// page, through GET /api/v1/judges and in a run's judge by GET
// /api/v1/runs/:id, and its owner in the edit form and in "Test
// connection"'s error. The owner's judge page asks to move the secret to
// the key field, and the form cannot store the address shown.
func TestStoredBaseURLCredentialsNeverShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		viewer := env.createUser(env.ws.ID, "vic@a.test", models.RoleViewer)
		oc, vc := env.sessionCookie(owner), env.sessionCookie(viewer)
		secrets := []string{"svc-user", "pw-s3cret", "qk-s3cret", "fr-s3cret"}
		// A closed port, so "Test connection" fails with the client's error.
		legacy := strings.Replace(closedPortURL(t), "http://", "http://svc-user:pw-s3cret@", 1) + "?api-version=1&api_key=qk-s3cret#access_token=fr-s3cret"
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "legacy judge", BaseURL: legacy, Model: "m", Temperature: 0.2, TopP: 0.9,
			MaxConcurrency: 1, TimeoutSeconds: 5}
		if err := env.db.Gorm.WithContext(ctx).Create(&j).Error; err != nil {
			t.Fatal(err)
		}
		run := env.startRun(env.demoDataset(), "run of a legacy judge", models.MethodBatchEval, func(r *models.Run) { r.JudgeSnapshot.BaseURL = legacy })
		id := itoa(j.ID)
		test := httptest.NewRequest(http.MethodPost, "/judges/"+id+"/test", nil)
		test.Header.Set("X-Requested-With", "fetch")
		test.AddCookie(oc)
		testRec := httptest.NewRecorder()
		env.e.ServeHTTP(testRec, test)
		edit := env.getAs("/judges/"+id+"/edit", oc)
		_, token := env.apiToken(env.ws.ID, viewer.ID)
		api := func(path string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec
		}
		shown := []struct {
			what string
			rec  *httptest.ResponseRecorder
		}{
			{"judges page", env.getAs("/judges", vc)},
			{"API judges", api("/api/v1/judges")},
			{"API judge", api("/api/v1/judges/" + id)},
			{"API run", api("/api/v1/runs/" + itoa(run.ID))},
			{"edit form", edit},
			{"test connection", testRec},
		}
		for _, s := range shown {
			b := s.rec.Body.String()
			if s.rec.Code != http.StatusOK {
				t.Errorf("%s = %d: %.300s", s.what, s.rec.Code, b)
				continue
			}
			for _, secret := range secrets {
				if strings.Contains(b, secret) {
					t.Errorf("%s shows %q", s.what, secret)
				}
			}
			if s.what != "test connection" && !strings.Contains(b, "REDACTED@127.0.0.1") {
				t.Errorf("%s does not show the address with REDACTED in the secret's place: %.600s", s.what, b)
			}
		}
		if b := edit.Body.String(); !strings.Contains(b, `data-testid="base-url-credentials"`) || !strings.Contains(b, "API key") {
			t.Errorf("the owner's judge page does not ask to move the secret to the key field")
		}
		if b := env.getAs("/judges/"+itoa(env.simulatedJudge().ID)+"/edit", oc).Body.String(); strings.Contains(b, `data-testid="base-url-credentials"`) {
			t.Errorf("a judge without credentials in its address shows the note")
		}
		// Saving the form as shown is refused and keeps the stored address.
		form := judgeFormValues("legacy judge", judge.RedactURL(legacy), "", "")
		if rec := env.send(http.MethodPost, "/judges/"+id, form, "", oc); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("saving the shown address = %d, want 422", rec.Code)
		}
		if stored, _ := env.judgeNamed("legacy judge"); stored.BaseURL != legacy {
			t.Errorf("stored base URL became %q", stored.BaseURL)
		}
	})
}

// TestJudgeBaseURLRefusesFragmentCredentials: a credential written in the
// base URL's fragment (#key=…, #access_token=…) is refused by the form and
// the API like one in the query string, naming the parameter and pointing
// to API key. So is any other fragment, a bare key after # (#sk-…, no
// name=) among them, which was stored and shown to every member: a chat
// endpoint has no use for a fragment (it is never sent). The key never
// shows in the answer.
func TestJudgeBaseURLRefusesFragmentCredentials(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, fragment, param string // param: "" for a fragment without name=
		}{
			{"key", "#key=fk-s3cr3t", "key"},
			{"access_token", "#access_token=at-s3cr3t&token_type=bearer", "access_token"},
			{"after a path", "#/callback?api_key=fk-s3cr3t", "api_key"},
			{"bare key", "#sk-s3cr3t0123456789abcdef", ""},
			{"no credential", "#models", ""},
			{"empty", "#", ""},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				baseURL := "https://llm.example/v1?api-version=2024-10-21" + tc.fragment
				page := env.postForm("/judges", judgeFormValues("frag page judge "+itoa(int64(i)), baseURL, "", ""))
				body, _ := json.Marshal(map[string]any{"name": "frag api judge " + itoa(int64(i)), "base_url": baseURL, "model": "m"})
				api := env.do(http.MethodPost, "/api/v1/judges", bytes.NewReader(body), echo.MIMEApplicationJSON)
				for what, rec := range map[string]*httptest.ResponseRecorder{"form": page, "API": api} {
					b := rec.Body.String()
					said := strings.Contains(b, "base URL must not hold a credential in its fragment") && strings.Contains(b, "#"+tc.param+"=…")
					if tc.param == "" {
						said = strings.Contains(b, "base URL must not have a fragment (a # and what follows it)")
					}
					if rec.Code != http.StatusUnprocessableEntity || !said || !strings.Contains(b, "API key") || strings.Contains(b, "s3cr3t") && what == "API" {
						t.Errorf("%s: %d %.400s, want 422 refusing the fragment and pointing to API key", what, rec.Code, b)
					}
				}
				for _, n := range []string{"frag page judge ", "frag api judge "} {
					if _, ok := env.judgeNamed(n + itoa(int64(i))); ok {
						t.Errorf("%q was stored", n+itoa(int64(i)))
					}
				}
			})
		}
	})
}

// TestJudgeBaseURLThatDoesNotParseRefused: a base URL that does not read
// as an address ("https://judge:se cret@host/v1": a space in the password)
// hides whatever credential it holds from the check that finds them, and
// was stored as typed, shown to every member. The form and the API now
// refuse it, the message quoting it cut before the '@'.
func TestJudgeBaseURLThatDoesNotParseRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const secret = "se cret-pw"
		baseURL := "https://judge:" + secret + "@llm.example/v1"
		page := env.postForm("/judges", judgeFormValues("unparsed page judge", baseURL, "", ""))
		body, _ := json.Marshal(map[string]any{"name": "unparsed api judge", "base_url": baseURL, "model": "m"})
		api := env.do(http.MethodPost, "/api/v1/judges", bytes.NewReader(body), echo.MIMEApplicationJSON)
		for what, rec := range map[string]*httptest.ResponseRecorder{"form": page, "API": api} {
			b := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(b, "cannot be read as an address") {
				t.Errorf("%s: %d %.400s, want 422 saying the base URL cannot be read", what, rec.Code, b)
			}
			// The form shows the person what they typed, to correct it; the
			// message quotes it cut.
			shown := html.UnescapeString(strings.ReplaceAll(b, `\"`, `"`)) // as the page or the JSON string reads
			if !strings.Contains(shown, `"[REDACTED]@llm.example/v1" cannot be read`) || (what == "API" && strings.Contains(b, "cret-pw")) {
				t.Errorf("%s: the message does not quote the address cut before the '@': %.600s", what, b)
			}
		}
		for _, n := range []string{"unparsed page judge", "unparsed api judge"} {
			if _, ok := env.judgeNamed(n); ok {
				t.Errorf("%q was stored", n)
			}
		}
	})
}
