package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSpendCapField: the launch form and the API carry the spending cap
// into the run's settings; a blank field is no cap, a bad amount is named.
func TestSpendCapField(t *testing.T) {
	capOf := func(in launchInput) string {
		if in.Settings.SpendCapUSD == nil {
			return "none"
		}
		return formatNumber(*in.Settings.SpendCapUSD)
	}
	two := 2.5
	for _, tc := range []struct {
		name    string
		vals    url.Values
		want    string
		problem string
	}{
		{"blank", url.Values{"spend_cap_usd": {" "}}, "none", ""},
		{"absent", url.Values{}, "none", ""},
		{"amount", url.Values{"spend_cap_usd": {"2.5"}}, "2.5", ""},
		{"from the API", APILaunch{Settings: APILaunchSettings{SpendCapUSD: &two}}.formValues(), "2.5", ""},
		{"not a number", url.Values{"spend_cap_usd": {"lots"}}, "none", "Spending cap"},
	} {
		in := parseLaunchInput(tc.vals)
		if got := capOf(in); got != tc.want {
			t.Errorf("%s: cap %s, want %s", tc.name, got, tc.want)
		}
		var msgs []string
		for _, e := range in.errs {
			msgs = append(msgs, e.text)
		}
		if all := strings.Join(msgs, " "); (tc.problem == "") != (all == "") || !strings.Contains(all, tc.problem) {
			t.Errorf("%s: problems %q, want one about %q", tc.name, all, tc.problem)
		}
	}
}

// TestSpendCapNeedsPrices: a cap cannot be kept without prices, so a launch
// with one on a judge without prices is refused; the form has the field.
func TestSpendCapNeedsPrices(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		unpriced := models.Judge{WorkspaceID: env.ws.ID, Name: "No prices", BaseURL: "http://127.0.0.1:1/v1", Model: "mystery-model"}
		if err := env.db.SaveJudge(t.Context(), &unpriced); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			judge int64
			want  int
		}{
			{"judge without prices", unpriced.ID, http.StatusUnprocessableEntity},
			// The simulated judge costs $0: its cost is known.
			{"simulated judge", d.judge.ID, http.StatusSeeOther},
		} {
			form := d.launchForm("1", "10")
			form.Set("judge", itoa(tc.judge))
			form.Set("spend_cap_usd", "1")
			rec := env.postForm("/projects/"+itoa(env.project.ID)+"/runs", form)
			if rec.Code != tc.want || (tc.want == http.StatusUnprocessableEntity) != strings.Contains(rec.Body.String(), "has no prices") {
				t.Errorf("%s: capped launch = %d, want %d (and the prices named when refused): %.300s", tc.name, rec.Code, tc.want, rec.Body)
			}
		}
		runs, err := env.db.ListRuns(t.Context(), env.ws.ID, env.project.ID)
		if err != nil || len(runs) == 0 || runs[0].Settings.SpendCapUSD == nil || *runs[0].Settings.SpendCapUSD != 1 {
			t.Errorf("the launched run's settings lack the cap: %v", err)
		}
		if rec := env.get("/projects/" + itoa(env.project.ID) + "/runs/new"); !strings.Contains(rec.Body.String(), `data-testid="spend-cap"`) {
			t.Errorf("launch form has no spending cap field")
		}
	})
}

// TestResumeRaisesSpendCap: the resume form may carry a new cap, stored on
// the stopped run before it resumes; a bad amount changes nothing.
func TestResumeRaisesSpendCap(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		form := env.demo().launchForm("1", "10")
		form.Set("spend_cap_usd", "1")
		run := env.waitRun(env.launch(form), 60*time.Second)
		for _, tc := range []struct {
			typed string
			want  float64
		}{
			{"abc", 1},
			{"-3", 1},
			{"7.5", 7.5},
		} {
			rec := env.postForm(fmt.Sprintf("/runs/%d/resume", run.ID), url.Values{"spend_cap_usd": {tc.typed}})
			if rec.Code != http.StatusSeeOther {
				t.Errorf("resume with cap %q = %d", tc.typed, rec.Code)
			}
			got, err := env.db.GetRun(t.Context(), run.ID)
			if err != nil || got.Settings.SpendCapUSD == nil || *got.Settings.SpendCapUSD != tc.want {
				t.Errorf("after resume with cap %q: cap %v (%v), want %g", tc.typed, got.Settings.SpendCapUSD, err, tc.want)
			}
		}
	})
}
