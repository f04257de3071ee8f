package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestOutOfCreditsSaysNoRun: Test connection on a judge whose
// account is out of credits said to add credits "then resume the run",
// where there is no run (regression). It says to add credits, and no run.
// A run it stops still says to resume it (TestRunOutOfCreditsSaysToAddCredits).
func TestJudgeTestOutOfCreditsSaysNoRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		srv := httptest.NewServer(refusingJudge(http.StatusPaymentRequired, "This request requires more credits"))
		defer srv.Close()
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "No credits", BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
		req.Header.Set("X-Requested-With", "fetch")
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		body := rec.Body.String()
		if !strings.Contains(body, "HTTP 402") || !strings.Contains(body, "add credits") {
			t.Fatalf("want the 402 and what to do: %s", body)
		}
		if strings.Contains(body, "resume") {
			t.Errorf("Test connection speaks of resuming a run: %s", body)
		}
	})
}
