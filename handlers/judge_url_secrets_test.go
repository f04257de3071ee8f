package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
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
