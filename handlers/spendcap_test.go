package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

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

// TestResumeAndContinueSetTheSpendCapOnlyWhenDone: the Resume form, the
// Continue form and POST /api/v1/runs/{id}/continue may carry a new cap,
// saved with the resume or continue: a refused one (the workspace's run
// limit, a bad amount, a cap not above what the run has spent) leaves the
// cap as it was. The Resume form used to save the cap before the resume
// was refused (a run with nothing to resume, or at the run limit, had its
// cap changed), and Continue took no cap at all.
func TestResumeAndContinueSetTheSpendCapOnlyWhenDone(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		form := env.demo().launchForm("1", "10")
		form.Set("spend_cap_usd", "1")
		run := env.waitRun(env.launch(form), 60*time.Second)
		other := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		runPath := fmt.Sprintf("/runs/%d", run.ID)
		capIs := func(step string, want float64) {
			t.Helper()
			got, err := env.db.GetRun(ctx, run.ID)
			if err != nil || got.Settings.SpendCapUSD == nil || *got.Settings.SpendCapUSD != want {
				t.Errorf("%s: cap %v (%v), want %g", step, got.Settings.SpendCapUSD, err, want)
			}
		}
		flash := func(step string, rec *httptest.ResponseRecorder, want string) {
			t.Helper()
			if got := rec.Header().Get("Set-Cookie"); rec.Code != http.StatusSeeOther || !strings.Contains(got, want) {
				t.Errorf("%s: %d, flash %q; want 303 with %q", step, rec.Code, got, want)
			}
		}
		atLimit := func(on bool) {
			t.Helper()
			env.db.MaxActiveRunsPerWorkspace = map[bool]int{true: 1, false: 0}[on]
			status := map[bool]string{true: models.RunRunning, false: models.RunSucceeded}[on]
			must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ? WHERE id = ?`, status, other.ID).Error)
		}

		// A complete run has nothing to resume: the cap stays.
		flash("resume a complete run with a cap of $7.50", env.postForm(runPath+"/resume", url.Values{"spend_cap_usd": {"7.5"}}), "error:")
		capIs("refused resume of a complete run", 1)

		// One batch left without an answer, as a stop at the cap leaves it.
		bs, err := env.db.ListBatches(ctx, run.ID)
		if err != nil || len(bs) == 0 {
			t.Fatalf("batches: %v (%d)", err, len(bs))
		}
		must(t, env.db.Gorm.Exec(`UPDATE run_batches SET status = ? WHERE id = ?`, models.BatchFailed, bs[0].ID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, batches_failed = 1, error = 'spending cap reached' WHERE id = ?`, models.RunFailed, run.ID).Error)
		atLimit(true)
		flash("resume at the run limit", env.postForm(runPath+"/resume", url.Values{"spend_cap_usd": {"7.5"}}), "error:")
		capIs("resume refused at the run limit", 1)
		atLimit(false)
		for _, typed := range []string{"abc", "-3", "1,000"} { // "1,000": a thousand, or 1.000?
			flash("resume with cap "+typed, env.postForm(runPath+"/resume", url.Values{"spend_cap_usd": {typed}}), "error:")
			capIs("resume with cap "+typed, 1)
		}
		// Typed with a decimal comma, as the launch form reads it (forms46).
		flash("resume with a cap of $7.50", env.postForm(runPath+"/resume", url.Values{"spend_cap_usd": {"7,5"}}), "ok:")
		capIs("resumed with a cap of $7.50", 7.5)
		env.waitRun(run.ID, 60*time.Second)

		// Paused, having spent $2.
		pause := func() {
			t.Helper()
			must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, cost_usd = 2 WHERE id = ?`, models.RunPaused, run.ID).Error)
		}
		pause()
		if body := env.get(runPath).Body.String(); !strings.Contains(body, `data-testid="continue-spend-cap"`) || !strings.Contains(body, `value="7.5"`) {
			t.Errorf("a paused run's Continue form offers no spending cap filled with the run's $7.50")
		}
		atLimit(true)
		flash("continue at the run limit", env.postForm(runPath+"/continue", url.Values{"spend_cap_usd": {"9"}}), "error:")
		capIs("continue refused at the run limit", 7.5)
		atLimit(false)
		rec := env.postForm(runPath+"/continue", url.Values{"spend_cap_usd": {"1.5"}})
		flash("continue with a cap below the $2 spent", rec, "error:")
		capIs("continue with a cap below what was spent", 7.5)
		flash("continue with a cap of $9", env.postForm(runPath+"/continue", url.Values{"spend_cap_usd": {"9"}}), "ok:")
		capIs("continued with a cap of $9", 9)
		env.waitRun(run.ID, 60*time.Second)

		api := fmt.Sprintf("/api/v1/runs/%d/continue", run.ID)
		for _, tc := range []struct {
			name, body string
			code       int
			cap        float64
		}{
			{"unknown field", `{"spend_cap": 12}`, http.StatusBadRequest, 9},
			{"cap below what was spent", `{"spend_cap_usd": 1}`, http.StatusUnprocessableEntity, 9},
			{"new cap", `{"spend_cap_usd": 12}`, http.StatusOK, 12},
			{"no body", ``, http.StatusOK, 12},
		} {
			pause()
			rec := env.do(http.MethodPost, api, strings.NewReader(tc.body), echo.MIMEApplicationJSON)
			if rec.Code != tc.code {
				t.Errorf("API continue, %s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.code)
			}
			capIs("API continue, "+tc.name, tc.cap)
			if rec.Code == http.StatusOK {
				env.waitRun(run.ID, 60*time.Second)
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
