package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
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

// TestRunSettingsStateTheSpendCap: a run's spending cap is one of its
// settings, so the run page's settings summary and "Produced by" settings
// and the CSV export's settings cell state it; a run without a cap states
// none (they used to leave every cap out).
func TestRunSettingsStateTheSpendCap(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		for _, tc := range []struct {
			name, cap         string
			summary, settings string // "" when no cap may be stated
		}{
			{"a cap", "5", "spending cap $5.00", "spend_cap_usd=5"},
			{"a cap with cents", "2.5", "spending cap $2.50", "spend_cap_usd=2.5"},
			{"no cap", "", "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := d.launchForm("1", "10")
				form.Set("spend_cap_usd", tc.cap)
				run := env.waitRun(env.launch(form), 60*time.Second)
				page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				summary := regexp.MustCompile(`data-testid="settings-summary">([^<]*)<`).FindStringSubmatch(page)
				settings := regexp.MustCompile(`data-testid="provenance-settings">([^<]*)<`).FindStringSubmatch(page)
				csv := env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String()
				if summary == nil || settings == nil {
					t.Fatalf("the run page lacks its settings summary or its provenance settings")
				}
				for _, c := range []struct{ where, text, want, never string }{
					{"settings summary", html.UnescapeString(summary[1]), tc.summary, "spending cap"},
					{"provenance settings", html.UnescapeString(settings[1]), tc.settings, "spend_cap"},
					{"CSV export", csv, tc.settings, "spend_cap"},
				} {
					if c.want != "" && !strings.Contains(c.text, c.want) {
						t.Errorf("%s lacks %q:\n%.600s", c.where, c.want, c.text)
					}
					if c.want == "" && strings.Contains(c.text, c.never) {
						t.Errorf("%s states a cap the run does not have:\n%.600s", c.where, c.text)
					}
				}
			})
		}
	})
}
