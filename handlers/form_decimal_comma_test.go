package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestLaunchFormReadsDecimalComma (forms46): the launch form refused
// "0,2" as a temperature ("write decimals with a dot") though dataset
// uploads and the rubric editor read a decimal comma. Temperature, top_p,
// the sample temperature and the spending cap are now read with the same
// reader (typedDecimal over dataimport.DecimalCommaNumber), and the run is
// stored with those numbers; text that is no number is still refused with
// the field's name and what to type.
func TestLaunchFormReadsDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		// The browser lets a decimal comma through: a number input would
		// send "" for "0,2" (or refuse it), so these are text inputs
		// asking for a decimal keyboard.
		page := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		for _, name := range []string{"temperature", "top_p", "spend_cap_usd", "sample_temperature"} {
			if !regexp.MustCompile(`<input type="text" inputmode="decimal" id="` + name + `" name="` + name + `"`).MatchString(page) {
				t.Errorf("the launch form's %s is not a text input with a decimal keyboard", name)
			}
		}
		launches := fmt.Sprintf("/projects/%d/runs", env.project.ID)
		form := d.methodForm("batcheval", map[string]string{"temperature": "0,7", "top_p": " 0,95 ", "spend_cap_usd": "2,5", "name": "Comma settings"})
		run := env.waitRun(env.launch(form), 90*time.Second)
		if run.Settings.Temperature != 0.7 || run.Settings.TopP != 0.95 {
			t.Errorf("stored temperature %g and top_p %g, want 0.7 and 0.95", run.Settings.Temperature, run.Settings.TopP)
		}
		if run.Settings.SpendCapUSD == nil || *run.Settings.SpendCapUSD != 2.5 {
			t.Errorf("stored spending cap %v, want 2.5", run.Settings.SpendCapUSD)
		}
		geval := env.waitRun(env.launch(d.methodForm("geval", map[string]string{"sample_temperature": "0,3", "samples": "2"})), 90*time.Second)
		if geval.MethodSettings.SampleTemperature != 0.3 {
			t.Errorf("stored sample temperature %g, want 0.3", geval.MethodSettings.SampleTemperature)
		}

		before, err := env.db.ListRuns(t.Context(), env.ws.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			set  map[string]string
			want string
		}{
			{"temperature a word", map[string]string{"temperature": "warm"}, `Temperature: “warm” is not a number (write decimals with a dot or a comma, e.g. 0.2 or 0,2, and no thousands separators).`},
			{"top_p with two commas", map[string]string{"top_p": "0,9,5"}, `top_p: “0,9,5” is not a number (write decimals with a dot or a comma, e.g. 0.9 or 0,9`},
			{"top_p with a comma, out of range", map[string]string{"top_p": "1,5"}, `top_p: 1.5 is out of range; use more than 0, up to 1.`},
			{"spending cap unsure", map[string]string{"spend_cap_usd": "1,000"}, `Spending cap: “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000.`},
			{"markup is shown as text", map[string]string{"temperature": "<b>0,2</b>"}, `Temperature: “<b>0,2</b>” is not a number`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.postForm(launches, d.methodForm("batcheval", tc.set))
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), templ.EscapeString(tc.want)) {
					t.Errorf("%v = %d, want 422 saying %q", tc.set, rec.Code, tc.want)
				}
				if strings.Contains(rec.Body.String(), "<b>0,2</b>") {
					t.Error("the typed markup is shown unescaped")
				}
			})
		}
		after, err := env.db.ListRuns(t.Context(), env.ws.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Errorf("refused launches created %d runs", len(after)-len(before))
		}
	})
}

// TestJudgeFormReadsDecimalComma (forms46): the judge form refused a
// price, temperature, top p or slow threshold written with a decimal
// comma. They are read as the launch form reads them, on a new judge and
// on an edit, and stored as numbers; a price that could be a thousand or
// one ("1,000") is refused with both ways to write it.
func TestJudgeFormReadsDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		form := judgeFormValues("Comma judge", "http://127.0.0.1:1/v1", "", "0,15")
		form.Set("price_output", "$2,5")
		form.Set("temperature", "0,3")
		form.Set("top_p", "0,8")
		form.Set("slow_seconds", "1,5")
		// With a shared limit: a slow threshold halves it, and alone it
		// is refused (TestJudgeLimitsForm).
		form.Set("shared_concurrency", "2")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("create = %d, want 303: %.1500s", rec.Code, rec.Body)
		}
		j, ok := env.judgeNamed("Comma judge")
		if !ok {
			t.Fatal("the judge was not stored")
		}
		check := func(j models.Judge, in, out, temp, topP float64) {
			t.Helper()
			if j.PriceInputPerMTok == nil || *j.PriceInputPerMTok != in || j.PriceOutputPerMTok == nil || *j.PriceOutputPerMTok != out {
				t.Errorf("stored prices %v and %v, want %g and %g", j.PriceInputPerMTok, j.PriceOutputPerMTok, in, out)
			}
			if j.Temperature != temp || j.TopP != topP {
				t.Errorf("stored temperature %g and top p %g, want %g and %g", j.Temperature, j.TopP, temp, topP)
			}
		}
		check(j, 0.15, 2.5, 0.3, 0.8)
		limits, err := env.db.FindJudgeLimits(t.Context(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if limits.SlowMS != 1500 {
			t.Errorf("stored slow threshold %d ms, want 1500", limits.SlowMS)
		}

		edit := judgeFormValues("Comma judge", "http://127.0.0.1:1/v1", "", "1,25")
		edit.Set("temperature", "0,0")
		if rec := env.postForm(fmt.Sprintf("/judges/%d", j.ID), edit); rec.Code != http.StatusSeeOther {
			t.Fatalf("edit = %d, want 303: %.1500s", rec.Code, rec.Body)
		}
		j, _ = env.judgeNamed("Comma judge")
		check(j, 1.25, 0.6, 0, 0.9)

		refused := judgeFormValues("Refused judge", "http://127.0.0.1:1/v1", "", "1,000")
		rec := env.postForm("/judges", refused)
		if want := "the input price “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000"; rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("price 1,000 = %d, want 422 saying %q", rec.Code, want)
		}
		if _, ok := env.judgeNamed("Refused judge"); ok {
			t.Error("a refused judge was stored")
		}
	})
}
