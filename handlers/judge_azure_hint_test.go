package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestNamesAzureDeploymentSlips: Test connection on an Azure
// OpenAI per-deployment address said "the endpoint refused the API key
// (HTTP 401): check the key" to a right key sent as a Bearer token, and
// "check the base URL (it usually ends in /v1) and the model name" to an
// address without its ?api-version= (found as a newcomer saving the judge
// from the form). It now names the field to change and the value.
func TestJudgeTestNamesAzureDeploymentSlips(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const key, version = "az-s3cret-key-91", "2024-10-21"
		azure, _ := fakeAzureJudge(t, "judge-4o", version, key)
		noVersion := strings.TrimSuffix(azure, "?api-version="+version)
		for _, tc := range []struct {
			name, baseURL, keyHeader string
			want, notWant            string
		}{
			{"key as a Bearer token", azure, "bearer", `set "Send the key as" to the api-key header`, ""},
			{"no api-version", noVersion, "api-key", "set the base URL to " + noVersion + "?api-version=2024-10-21", "it usually ends in /v1"},
			{"both right", azure, "api-key", "", "per-deployment address"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Azure " + tc.name, BaseURL: tc.baseURL, Model: "judge-4o", APIKey: key, KeyHeader: tc.keyHeader,
					TimeoutSeconds: 5, Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				must(t, env.db.SaveJudge(context.Background(), &j))
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				req.Header.Set("X-Requested-With", "fetch")
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if tc.want == "" {
					if !strings.Contains(body, "flash ok") {
						t.Fatalf("the test failed: %.600s", body)
					}
				} else if !strings.Contains(body, templ.EscapeString(tc.want)) {
					t.Errorf("the result lacks %q: %.800s", tc.want, body)
				}
				if tc.notWant != "" && strings.Contains(body, templ.EscapeString(tc.notWant)) {
					t.Errorf("the result says %q: %.800s", tc.notWant, body)
				}
				if strings.Contains(body, key) {
					t.Errorf("the result shows the key")
				}
			})
		}
	})
}

// TestRunFailureNamesAzureDeploymentSlips: a run on an Azure OpenAI
// per-deployment address with one of the slips Test connection names (no
// ?api-version=, the key sent as a Bearer token) failed with the bare
// refusal ("the endpoint refused the API key (HTTP 401): check the key",
// or, without the api-version, every batch failed with HTTP 400 and the
// run with "no score could be read"): its page now says what to change,
// in the words of Test connection.
func TestRunFailureNamesAzureDeploymentSlips(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const key, version = "az-s3cret-key-92", "2024-10-21"
		azure, _ := fakeAzureJudge(t, "judge-4o", version, key)
		noVersion := strings.TrimSuffix(azure, "?api-version="+version)
		for _, tc := range []struct {
			name, baseURL, keyHeader string
			want                     string
		}{
			{"key as a Bearer token", azure, "bearer", `set "Send the key as" to the api-key header`},
			{"no api-version", noVersion, "api-key", "set the base URL to " + noVersion + "?api-version=2024-10-21"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Azure run " + tc.name, BaseURL: tc.baseURL, Model: "judge-4o", APIKey: key, KeyHeader: tc.keyHeader,
					TimeoutSeconds: 5, Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				must(t, env.db.SaveJudge(context.Background(), &j))
				form := env.demo().launchForm("5", "15")
				form.Set("judge", strconv.FormatInt(j.ID, 10))
				run := env.waitRun(env.launch(form), 60*time.Second)
				if run.Status != models.RunFailed {
					t.Fatalf("run %s, want failed", run.Status)
				}
				if !strings.Contains(run.Error, tc.want) || !strings.HasPrefix(run.Error, models.JudgeSettingsStop) {
					t.Errorf("run error %q: want it to stop on the judge's settings and say %q", run.Error, tc.want)
				}
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				if !strings.Contains(body, templ.EscapeString(tc.want)) {
					t.Errorf("the run page lacks %q", tc.want)
				}
				if strings.Contains(body, key) || strings.Contains(run.Error, key) {
					t.Errorf("the run's failure shows the key")
				}
			})
		}
	})
}
