package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// methodForm is the demo's launch form for a method, with changes.
func (d demoChoices) methodForm(method string, set map[string]string) url.Values {
	f := d.launchForm("1", "10")
	f.Set("method", method)
	for k, v := range set {
		f.Set(k, v)
	}
	return f
}

func TestLaunchEachMethod(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows := d.dataset.RowCount
		crits := len(d.rubric.Criteria)
		// batchSources lists the distinct G-Eval sources of a run's batches.
		batchSources := func(t *testing.T, runID int64) map[string]int {
			t.Helper()
			bs, err := env.db.ListBatches(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			for _, b := range bs {
				src, _ := b.Details["source"].(string)
				out[src]++
			}
			return out
		}
		cases := []struct {
			name  string
			form  url.Values
			check func(t *testing.T, run models.Run)
		}{
			{"G-Eval with log-probabilities", d.methodForm("geval", nil), func(t *testing.T, run models.Run) {
				if got := batchSources(t, run.ID); got[evaluator.GEvalSourceLogprobs] != rows*crits || len(got) != 1 {
					t.Errorf("batch sources = %v, want all %d from logprobs", got, rows*crits)
				}
				if !run.MethodSettings.UseLogprobs {
					t.Errorf("UseLogprobs = false, want true (the default)")
				}
				for _, c := range d.rubric.Criteria {
					if !strings.HasPrefix(run.MethodSettings.GEvalSteps[c.Name], "1. ") {
						t.Errorf("steps of %s = %q, want generated numbered steps", c.Name, run.MethodSettings.GEvalSteps[c.Name])
					}
				}
			}},
			{"G-Eval with sampling", d.methodForm("geval", map[string]string{"use_logprobs": "0", "samples": "4"}), func(t *testing.T, run models.Run) {
				if got := batchSources(t, run.ID); got[evaluator.GEvalSourceSamples] != rows*crits || len(got) != 1 {
					t.Errorf("batch sources = %v, want all %d from samples", got, rows*crits)
				}
				if run.MethodSettings.UseLogprobs || run.MethodSettings.Samples != 4 {
					t.Errorf("method settings = %+v, want logprobs off and n = 4", run.MethodSettings)
				}
			}},
			{"LLM-Eval on 0-100", d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-100"}), func(t *testing.T, run models.Run) {
				scores, err := env.db.ListScores(ctx, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				perCrit := map[int]int{}
				for _, s := range scores {
					if s.Score != nil && *s.Score >= 0 && *s.Score <= 100 {
						perCrit[s.CriterionIndex]++
					}
				}
				for ci := range crits {
					if perCrit[ci] != rows {
						t.Errorf("criterion %d has %d scores in [0, 100], want %d", ci, perCrit[ci], rows)
					}
				}
				if run.Settings.Temperature != 0 {
					t.Errorf("temperature = %g, want 0 (LLM-Eval's greedy default, field left as shown)", run.Settings.Temperature)
				}
				if run.MethodSettings.LLMEvalScale != evaluator.LLMEvalHundred {
					t.Errorf("scale = %q, want 0-100", run.MethodSettings.LLMEvalScale)
				}
			}},
			{"CloserLook", d.methodForm("closerlook", map[string]string{"samples": "3"}), func(t *testing.T, run models.Run) {
				if run.Calls != rows*crits {
					t.Errorf("calls = %d, want rows × criteria = %d", run.Calls, rows*crits)
				}
				if run.MethodSettings.Samples != 3 {
					t.Errorf("n = %d, want 3", run.MethodSettings.Samples)
				}
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				runID := env.launch(tc.form)
				run := env.waitRun(runID, 90*time.Second)
				if run.Status != models.RunSucceeded {
					t.Fatalf("status %s (%s), want succeeded", run.Status, run.Error)
				}
				if want := tc.form.Get("method"); run.Method != want {
					t.Errorf("method = %q, want %q", run.Method, want)
				}
				tc.check(t, run)
			})
		}
	})
}

func TestLaunchTemperatureFollowsMethod(t *testing.T) {
	cases := []struct {
		name, method, typed, shown string
		want                       float64
	}{
		{"LLM-Eval, BatchEval's default left as is", "llmeval", "0.2", "", 0},
		{"LLM-Eval, field shown as 0.2 and left", "llmeval", "0.2", "0.2", 0},
		{"LLM-Eval, blank", "llmeval", "", "", 0},
		{"LLM-Eval, changed by the person", "llmeval", "0.7", "0", 0.7},
		{"LLM-Eval, 0.2 typed over a shown 0", "llmeval", "0.2", "0", 0.2},
		{"BatchEval, LLM-Eval's 0 left as shown", "batcheval", "0", "0", 0.2},
		{"BatchEval, changed by the person", "batcheval", "0.5", "0.2", 0.5},
	}
	for _, tc := range cases {
		vals := url.Values{"method": {tc.method}, "temperature": {tc.typed}}
		if tc.shown != "" {
			vals.Set("temperature_shown", tc.shown)
		}
		in := parseLaunchInput(vals)
		if got := (&launchPlan{}).settingsFor(in, in.Method).Temperature; got != tc.want {
			t.Errorf("%s: temperature = %g, want %g", tc.name, got, tc.want)
		}
	}
	// A judge's own temperature and top_p apply to fields left as shown,
	// except LLM-Eval's greedy decoding; typed values still win.
	pl := &launchPlan{judge: &models.Judge{Temperature: 0.6, TopP: 0.5}}
	for _, tc := range []struct {
		name      string
		vals      url.Values
		temp, top float64
	}{
		{"untouched", url.Values{"method": {"batcheval"}, "temperature": {"0.2"}, "temperature_shown": {"0.2"}, "top_p": {"0.9"}, "top_p_shown": {"0.9"}}, 0.6, 0.5},
		{"llm-eval stays greedy", url.Values{"method": {"llmeval"}, "temperature": {"0"}, "temperature_shown": {"0"}}, 0, 0.5},
		{"typed", url.Values{"method": {"closerlook"}, "temperature": {"1.1"}, "temperature_shown": {"0.6"}, "top_p": {"0.8"}, "top_p_shown": {"0.5"}}, 1.1, 0.8},
	} {
		in := parseLaunchInput(tc.vals)
		s := pl.settingsFor(in, in.Method)
		if s.Temperature != tc.temp || s.TopP != tc.top {
			t.Errorf("judge defaults, %s: temperature %g top_p %g, want %g and %g", tc.name, s.Temperature, s.TopP, tc.temp, tc.top)
		}
	}
}

func TestEstimatePerMethod(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		rows, crits := d.dataset.RowCount, len(d.rubric.Criteria)
		estimate := func(method string, set map[string]string) string {
			f := d.launchForm("5", "10")
			f.Set("method", method)
			f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
			for k, v := range set {
				f.Set(k, v)
			}
			rec := env.postForm("/runs/estimate", f)
			if rec.Code != http.StatusOK {
				t.Errorf("estimate %s: status %d", method, rec.Code)
			}
			return rec.Body.String()
		}
		calls := func(n int) string { return fmt.Sprintf(`data-testid="estimate-calls">%d<`, n) }
		// atMost is the estimate's ceiling, written with a thousands comma.
		atMost := func(n int) string {
			s := strconv.Itoa(n)
			if len(s) > 3 {
				s = s[:len(s)-3] + "," + s[len(s)-3:]
			}
			return "At most " + s + "."
		}
		cases := []struct {
			name, body    string
			want, notWant []string
		}{
			{"BatchEval", estimate("batcheval", nil),
				[]string{calls(crits * 5 * 3), "BatchEval", "repair calls"}, []string{"estimate-calls-max"}},
			{"BatchEval with B = 1", estimate("batcheval", map[string]string{"batch_size": "1", "rounds": "1"}),
				[]string{calls(crits * rows), "sample-wise"}, nil},
			// One call per criterion writes the missing steps.
			{"G-Eval, steps to write", estimate("geval", nil),
				[]string{calls(crits*rows + crits), "G-Eval", "log-probabilities", atMost(crits*rows + crits + crits*rows*20)}, nil},
			{"G-Eval, steps given", estimate("geval", map[string]string{"steps_0": "1. Read.", "steps_1": "1. Read."}),
				[]string{calls(crits * rows)}, []string{"to write the evaluation steps"}},
			{"G-Eval sampling", estimate("geval", map[string]string{"use_logprobs": "0", "steps_0": "1. Read.", "steps_1": "1. Read."}),
				[]string{calls(crits * rows), "n = 20", atMost(crits * rows * 20)}, nil},
			{"LLM-Eval", estimate("llmeval", nil),
				[]string{calls(rows), "LLM-Eval", "JSON"}, []string{"estimate-calls-max"}},
			{"CloserLook", estimate("closerlook", map[string]string{"samples": "10"}),
				[]string{calls(crits * rows), "CloserLook", "n = 10", atMost(crits * rows * 10)}, nil},
			{"CloserLook with n = 0", estimate("closerlook", map[string]string{"samples": "0"}),
				[]string{"No estimate until the CloserLook (analyze-rate) settings are valid"}, []string{"estimate-calls"}},
		}
		for _, tc := range cases {
			for _, w := range tc.want {
				if !strings.Contains(tc.body, templ.EscapeString(w)) && !strings.Contains(tc.body, w) {
					t.Errorf("%s: lacks %q", tc.name, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(tc.body, w) {
					t.Errorf("%s: should not contain %q", tc.name, w)
				}
			}
		}
	})
}

// stepsBox reads the text of the G-Eval steps box of criterion i.
func stepsBox(body string, i int) (string, bool) {
	re := regexp.MustCompile(fmt.Sprintf(`(?s)<textarea id="steps_%d"[^>]*>(.*?)</textarea>`, i))
	m := re.FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func TestGenerateGEvalSteps(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		path := fmt.Sprintf("/projects/%d/runs/geval-steps", env.project.ID)
		own := "1. My own first step\n2. My own second step"
		f := d.methodForm("batcheval", map[string]string{"steps_0": own, "steps_1": ""})
		rec := env.postForm(path, f)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d, want 200; body: %s", rec.Code, rec.Body.String())
		}
		body := rec.Body.String()
		if got, _ := stepsBox(body, 0); got != templ.EscapeString(own) {
			t.Errorf("box 0 = %q, want the typed steps kept: %q", got, own)
		}
		got, ok := stepsBox(body, 1)
		if !ok {
			t.Fatalf("no steps box for criterion 1 in the page")
		}
		if !strings.HasPrefix(got, "1. ") || !strings.Contains(got, "\n2. ") {
			t.Errorf("box 1 = %q, want numbered steps written by the judge", got)
		}
		if !strings.Contains(body, `<option value="geval" selected`) {
			t.Errorf("the form does not have G-Eval chosen after generating its steps")
		}
		if !strings.Contains(body, `data-testid="form-notice"`) || !strings.Contains(body, d.rubric.Criteria[1].Name) {
			t.Errorf("no notice naming the criterion whose steps were written")
		}

		// No criterion chosen: nothing to write, and it says so.
		f.Del("criteria")
		rec = env.postForm(path, f)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("no criteria: status %d, want 422", rec.Code)
		}
		if !strings.Contains(rec.Body.String(), "Choose at least one criterion.") {
			t.Errorf("no criteria: the page does not ask for one")
		}
	})
}

func TestLaunchAllMethods(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		path := fmt.Sprintf("/projects/%d/experiments", env.project.ID)

		// Invalid: n = 0 is read by G-Eval and CloserLook.
		bad := d.methodForm("batcheval", map[string]string{"samples": "0"})
		rec := env.postForm(path, bad)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("n = 0: status %d, want 422", rec.Code)
		}
		if body := rec.Body.String(); !strings.Contains(body, "No method was launched") || !strings.Contains(body, "Samples n: 0 is out of range; use 1 to 100.") {
			t.Errorf("n = 0: the form does not say why")
		}
		if es, _ := env.db.ListExperiments(ctx, env.ws.ID, env.project.ID); len(es) != 0 {
			t.Errorf("an invalid launch-all created %d experiments, want 0", len(es))
		}

		cases := []struct {
			name, formName, wantName string
		}{
			{"default name", "", "All methods on " + d.dataset.Name},
			{"named", "Methods side by side", "Methods side by side"},
		}
		for _, tc := range cases {
			f := d.methodForm("geval", map[string]string{"name": tc.formName})
			rec := env.postForm(path, f)
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("%s: status %d, want 303; body: %s", tc.name, rec.Code, rec.Body.String())
			}
			loc := rec.Header().Get("Location")
			id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/experiments/"), 10, 64)
			if err != nil {
				t.Fatalf("%s: redirected to %q, want /experiments/<id>", tc.name, loc)
			}
			e, err := env.db.FindExperiment(ctx, env.ws.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if e.Name != tc.wantName {
				t.Errorf("%s: experiment name %q, want %q", tc.name, e.Name, tc.wantName)
			}
			runs, err := env.h.DB.ListExperimentRuns(ctx, env.ws.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			setups := runner.StandardSetups(evaluator.DefaultSettings(), evaluator.DefaultMethodSettings())
			if len(runs) != len(setups) || len(runs) != 9 {
				t.Fatalf("%s: %d runs, want 9", tc.name, len(runs))
			}
			for i, r := range runs {
				if r.Method != string(setups[i].Method) || r.Name != setups[i].Name {
					t.Errorf("%s: run %d is %s %q, want %s %q", tc.name, i, r.Method, r.Name, setups[i].Method, setups[i].Name)
				}
				if r.DatasetID != d.dataset.ID || len(r.RubricSnapshot.Criteria) != len(d.rubric.Criteria) {
					t.Errorf("%s: run %d is on dataset %d with %d criteria, want the form's", tc.name, i, r.DatasetID, len(r.RubricSnapshot.Criteria))
				}
			}
			// The form's BatchEval settings are the base: one round, as posted.
			if runs[0].Settings.Rounds != 1 {
				t.Errorf("%s: BatchEval default has %d rounds, want the form's 1", tc.name, runs[0].Settings.Rounds)
			}
		}
	})
}

func TestLaunchMethodInvalidInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		fractional := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Fractional", Task: "Judge the response.",
			Criteria: []evaluator.Criterion{{Name: "Fine", Lo: 0.5, Hi: 1.5}}}
		if err := env.db.SaveRubric(ctx, &fractional); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			form url.Values
			want string
		}{
			{"G-Eval with n = 0", d.methodForm("geval", map[string]string{"samples": "0"}), "samples n must be between 1 and 100, got 0"},
			{"CloserLook with n = 0", d.methodForm("closerlook", map[string]string{"samples": "0"}), "samples n must be between 1 and 100, got 0"},
			{"CloserLook with n unreadable", d.methodForm("closerlook", map[string]string{"samples": "twenty"}), `Samples n: “twenty” is not a whole number.`},
			{"sample temperature too high", d.methodForm("geval", map[string]string{"sample_temperature": "3"}), "sample temperature must be between 0 and 2"},
			{"unknown method", d.methodForm("oracle", nil), `Method: “oracle” is not a method; use batcheval for BatchEval, geval for G-Eval, llmeval for LLM-Eval or closerlook for CloserLook (analyze-rate).`},
			{"BatchEval with top_p unreadable", d.methodForm("batcheval", map[string]string{"top_p": "most"}), `top_p: “most” is not a number (write decimals with a dot or a comma, e.g. 0.9 or 0,9, and no thousands separators).`},
			{"LLM-Eval with temperature unreadable", d.methodForm("llmeval", map[string]string{"temperature": "warm"}), `Temperature: “warm” is not a number (write decimals with a dot or a comma, e.g. 0.2 or 0,2, and no thousands separators).`},
			// A decimal comma is read (TestLaunchFormReadsDecimalComma):
			// out of range it says so, unsure it names both readings.
			{"BatchEval with a decimal comma out of range", d.methodForm("batcheval", map[string]string{"temperature": "2,5"}), `Temperature: 2.5 is out of range; use 0 to 2.`},
			{"G-Eval with a thousand or one", d.methodForm("geval", map[string]string{"sample_temperature": "1,000"}), `Sample temperature: “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000.`},
			{"G-Eval with seed unreadable", d.methodForm("geval", map[string]string{"seed": "x"}), `Seed: “x” is not a whole number.`},
			{"unknown LLM-Eval scale", d.methodForm("llmeval", map[string]string{"llmeval_scale": "1-10"}), `unknown LLM-Eval scale "1-10"`},
			{"G-Eval on a range without two integers", func() url.Values {
				f := d.methodForm("geval", map[string]string{"rubric": strconv.FormatInt(fractional.ID, 10), "criteria_of": strconv.FormatInt(fractional.ID, 10)})
				f["criteria"] = []string{"0"}
				return f
			}(), "G-Eval needs an integer scale"},
		}
		for _, tc := range cases {
			rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), tc.form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422", tc.name, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, templ.EscapeString(tc.want)) {
				t.Errorf("%s: form does not say %q", tc.name, tc.want)
			}
		}
		runs, err := env.db.ListRuns(ctx, env.ws.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 0 {
			t.Errorf("invalid launches created %d runs, want 0", len(runs))
		}

		// Fields a method does not read (methods.Method.Reads) do not block
		// it: LLM-Eval ignores n, BatchEval the G-Eval settings, G-Eval and
		// CloserLook BatchEval's rounds, temperature and top_p, and the
		// LLM-Eval scale.
		ignored := []struct {
			name string
			form url.Values
		}{
			{"LLM-Eval with n = 0", d.methodForm("llmeval", map[string]string{"samples": "0"})},
			{"BatchEval with n unreadable", d.methodForm("batcheval", map[string]string{"samples": "many"})},
			{"G-Eval with rounds and temperature unreadable", d.methodForm("geval", map[string]string{"rounds": "many", "temperature": "warm"})},
			{"CloserLook with top_p unreadable", d.methodForm("closerlook", map[string]string{"top_p": "most"})},
			// Was refused as "G-Eval settings: unknown LLM-Eval scale".
			{"G-Eval with an unknown LLM-Eval scale", d.methodForm("geval", map[string]string{"llmeval_scale": "1-10"})},
			{"CloserLook with an unknown LLM-Eval scale", d.methodForm("closerlook", map[string]string{"llmeval_scale": "1-10"})},
		}
		for _, tc := range ignored {
			rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), tc.form)
			if rec.Code != http.StatusSeeOther {
				t.Errorf("%s: status %d, want 303", tc.name, rec.Code)
			}
		}
	})
}

func TestLaunchFormShowsEveryMethod(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		body := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		for _, w := range []string{
			`<option value="batcheval" selected`, `<option value="geval"`, `<option value="llmeval"`, `<option value="closerlook"`,
			`name="samples" min="1" max="100" value="20"`, `name="sample_temperature"`, `name="use_logprobs" value="1" checked`,
			`<option value="0-5" selected`, `id="steps_0"`, `id="steps_1"`, "Generate steps now",
			fmt.Sprintf(`formaction="/projects/%d/experiments"`, env.project.ID), "Launch all methods",
			"B = 1 is sample-wise evaluation", `name="temperature_shown" value="0.2"`,
			// The note under "Launch all methods" lists the methods' own
			// setups (methods.Method.Setups), not a copy of them.
			"starts 9 runs in one experiment", "BatchEval (default); BatchEval, one stage; BatchEval, three stage; BatchEval, random batches; " +
				"BatchEval, homogeneous batches; BatchEval, integer scores; G-Eval; LLM-Eval; CloserLook (analyze-rate).",
		} {
			if !strings.Contains(body, w) {
				t.Errorf("launch form lacks %q", w)
			}
		}
	})
}
