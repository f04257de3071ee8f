package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

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
