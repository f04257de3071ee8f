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

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/perturb"
	"github.com/batcheval/batcheval/models"
)

// selectHTML cuts the select with the given id out of a page.
func selectHTML(t *testing.T, body, id string) string {
	t.Helper()
	start := strings.Index(body, `<select id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no select %q on the page", id)
	}
	end := strings.Index(body[start:], "</select>")
	return body[start : start+end]
}

var selectedOption = regexp.MustCompile(`<option value="(\d+)" selected`)

// selectedID is the value of the selected option of a select.
func selectedID(t *testing.T, body, id string) int64 {
	t.Helper()
	m := selectedOption.FindStringSubmatch(selectHTML(t, body, id))
	if m == nil {
		t.Fatalf("select %q has no selected option", id)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// The launch form must never pick a derived copy by itself: after "make a
// noisy copy" the newest dataset is the copy, and runs silently used it.
func TestLaunchFormChoosesMainDataset(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		main := d.dataset
		formURL := fmt.Sprintf("/projects/%d/runs/new", env.project.ID)
		// want is the dataset the form must choose; noisy and later are
		// the copy and the second upload once made.
		want := main.ID
		var noisy, later models.Dataset
		cases := []struct {
			name  string
			setup func(t *testing.T)
			// copyLabel is a label the dataset select must show.
			copyLabel string
		}{
			{"after a noisy copy", func(t *testing.T) {
				parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
				if parent.Status != models.RunSucceeded {
					t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
				}
				if _, _, err := env.runner.LaunchNoise(ctx, env.ws.ID, parent.ID, 3, perturb.Options{DeleteRate: 0.05, ReplaceRate: 0.05}); err != nil {
					t.Fatal(err)
				}
				ds, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
				if err != nil || len(ds) != 2 || ds[0].ParentDatasetID == nil {
					t.Fatalf("want the noisy copy as the newest dataset, got %+v (%v)", ds, err)
				}
				noisy = ds[0]
			}, "(noisy copy of " + main.Name + ")"},
			{"after a later upload", func(t *testing.T) {
				rows, err := env.db.ListDatasetRows(ctx, main.ID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				later = models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Second upload", Format: main.Format,
					IDColumn: main.IDColumn, Columns: main.Columns, Fields: main.Fields, RatingColumns: main.RatingColumns}
				if err := env.db.CreateDataset(ctx, &later, rows); err != nil {
					t.Fatal(err)
				}
			}, "Second upload ("},
			{"a copy cannot be marked main", func(t *testing.T) {
				rec := env.postForm(fmt.Sprintf("/datasets/%d/main", noisy.ID), nil)
				if rec.Code != http.StatusSeeOther || !strings.Contains(flashText(t, rec), "derived copy") {
					t.Fatalf("marking the copy main: status %d, flash %q", rec.Code, flashText(t, rec))
				}
			}, "(noisy copy of " + main.Name + ")"},
			{"the dataset marked main", func(t *testing.T) {
				if rec := env.postForm(fmt.Sprintf("/datasets/%d/main", later.ID), nil); rec.Code != http.StatusSeeOther {
					t.Fatalf("marking main: status %d", rec.Code)
				}
				want = later.ID
				page := env.get(fmt.Sprintf("/projects/%d", env.project.ID)).Body.String()
				if i := strings.Index(page, `data-testid="main-dataset"`); i < 0 || !strings.Contains(page[strings.LastIndex(page[:i], "<tr>"):i], later.Name) {
					t.Errorf("the project page does not mark %q main", later.Name)
				}
			}, "Second upload ("},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.setup(t)
				body := env.get(formURL).Body.String()
				if got := selectedID(t, body, "dataset"); got != want {
					t.Errorf("the form selects dataset %d, want %d", got, want)
				}
				if sel := selectHTML(t, body, "dataset"); !strings.Contains(sel, tc.copyLabel) {
					t.Errorf("dataset select lacks %q:\n%s", tc.copyLabel, sel)
				}
				// A launch that names no dataset (a script, an old form)
				// runs on the main dataset too.
				f := d.launchForm("1", "10")
				f.Del("dataset")
				run, err := env.db.GetRun(ctx, env.launch(f))
				if err != nil {
					t.Fatal(err)
				}
				if run.DatasetID != want {
					t.Errorf("a launch without a dataset ran on %d, want %d", run.DatasetID, want)
				}
			})
		}
	})
}

// Criteria follow the chosen rubric, and the server refuses criteria that
// were ticked on another rubric's list.
func TestLaunchCriteriaFollowRubric(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		other := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Fluency only", Task: "A response to judge.",
			Criteria: []evaluator.Criterion{{Name: "Fluent", Description: "Reads well.", Lo: 1, Hi: 3}}}
		if err := env.db.SaveRubric(ctx, &other); err != nil {
			t.Fatal(err)
		}
		id := func(n int64) string { return strconv.FormatInt(n, 10) }
		form := func(rubric, criteriaOf int64, criteria ...int) url.Values {
			f := d.launchForm("1", "10")
			f.Set("rubric", id(rubric))
			f.Set("criteria_of", id(criteriaOf))
			f.Del("criteria")
			for _, k := range criteria {
				f.Add("criteria", strconv.Itoa(k))
			}
			return f
		}
		t.Run("reload shows the chosen rubric's criteria", func(t *testing.T) {
			q := form(other.ID, d.rubric.ID, 0, 1)
			body := env.get(fmt.Sprintf("/projects/%d/runs/new?%s", env.project.ID, q.Encode())).Body.String()
			crit := body[strings.Index(body, `id="criteria"`):]
			crit = crit[:strings.Index(crit, "</fieldset>")]
			if !strings.Contains(crit, "Fluent") || strings.Contains(crit, "Engaging") {
				t.Errorf("criteria after choosing %q:\n%s", other.Name, crit)
			}
			if !strings.Contains(crit, `name="criteria_of" value="`+id(other.ID)+`"`) {
				t.Errorf("criteria_of does not name the shown rubric %d:\n%s", other.ID, crit)
			}
			if got := selectedID(t, body, "rubric"); got != other.ID {
				t.Errorf("rubric select = %d, want %d", got, other.ID)
			}
		})
		countRuns := func() int {
			runs, err := env.db.ListRuns(ctx, env.ws.ID, env.project.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(runs)
		}
		refused := []struct {
			name string
			form url.Values
			want string
		}{
			{"ticked on the previous rubric", form(other.ID, d.rubric.ID, 0, 1), `the ticked criteria belonged to another rubric than “Fluency only”`},
			{"a criterion the rubric lacks", form(other.ID, other.ID, 0, 1), `rubric “Fluency only” has no criterion number 2`},
			{"no criterion", form(other.ID, other.ID), "Choose at least one criterion."},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				before := countRuns()
				rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), tc.form)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				next := body[strings.Index(body, `data-testid="field-error-criteria"`):]
				if !strings.Contains(next[:strings.Index(next, "</div>")], tc.want) {
					t.Errorf("no %q next to the criteria:\n%s", tc.want, body)
				}
				if after := countRuns(); after != before {
					t.Errorf("%d runs launched, want none", after-before)
				}
			})
		}
		t.Run("the run judges exactly the shown criteria", func(t *testing.T) {
			run, err := env.db.GetRun(ctx, env.launch(form(other.ID, other.ID, 0)))
			if err != nil {
				t.Fatal(err)
			}
			if got := run.RubricSnapshot.Criteria; len(got) != 1 || got[0].Name != "Fluent" {
				t.Errorf("run criteria = %+v, want only Fluent", got)
			}
		})
	})
}

// Every problem of a launch shows at once, each next to its field.
func TestLaunchErrorsNextToFields(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		f := d.launchForm("x", "10")
		f.Set("seed", "1.5")
		f.Set("spend_cap_usd", "lots")
		f.Del("criteria")
		rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", rec.Code)
		}
		body := rec.Body.String()
		want := map[string]string{
			"rounds":        `Rounds: “x” is not a whole number.`,
			"seed":          `Seed: “1.5” is not a whole number.`,
			"spend_cap_usd": `Spending cap: “lots” is not an amount of US dollars (write decimals with a dot or a comma, e.g. 2.5 or 2,5, and no thousands separators).`,
			"criteria":      "Choose at least one criterion.",
		}
		// The reloading buttons land where their change is.
		for _, want := range []string{
			fmt.Sprintf(`formaction="/projects/%d/runs/geval-steps#geval-steps"`, env.project.ID), `id="geval-steps"`,
			fmt.Sprintf(`formaction="/projects/%d/runs/new#criteria"`, env.project.ID), `id="criteria"`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the launch form lacks %s", want)
			}
		}
		top := body[strings.Index(body, `data-testid="form-errors"`):]
		top = top[:strings.Index(top, "</div>")]
		for field, msg := range want {
			i := strings.Index(body, `data-testid="field-error-`+field+`"`)
			if i < 0 {
				t.Errorf("no message next to %s", field)
				continue
			}
			if next := body[i:]; !strings.Contains(next[:strings.Index(next, "</div>")], msg) {
				t.Errorf("next to %s: want %q", field, msg)
			}
			if !strings.Contains(top, `href="#`+field+`"`) || !strings.Contains(top, msg) {
				t.Errorf("the list at the top lacks %q linked to #%s:\n%s", msg, field, top)
			}
		}
	})
}

// Values out of range show at once too, each next to its field. QA:
// rounds 0, temperature 3 and a cap of -1 came back one per submission,
// in the list at the top only.
func TestLaunchRangeErrorsNextToFields(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := env.demo().launchForm("0", "101")
		f.Set("temperature", "3")
		f.Set("top_p", "0")
		f.Set("spend_cap_usd", "-1")
		rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", rec.Code)
		}
		body := rec.Body.String()
		want := map[string]string{
			"rounds":        "Rounds: 0 is out of range; use 1 to 50.",
			"batch_size":    "Batch size: 101 is out of range; use 1 to 100.",
			"temperature":   "Temperature: 3 is out of range; use 0 to 2.",
			"top_p":         "top_p: 0 is out of range; use more than 0, up to 1.",
			"spend_cap_usd": "Spending cap: -1 is not a positive amount of US dollars; leave the field empty for no cap.",
		}
		for field, msg := range want {
			i := strings.Index(body, `data-testid="field-error-`+field+`"`)
			if i < 0 {
				t.Errorf("no message next to %s", field)
				continue
			}
			if next := body[i:]; !strings.Contains(next[:strings.Index(next, "</div>")], msg) {
				t.Errorf("next to %s: want %q", field, msg)
			}
		}
	})
}

// An empty project's launch form says what is missing, with links.
func TestLaunchFormEmptyProject(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		p := models.Project{WorkspaceID: env.ws.ID, Name: "Empty"}
		if err := env.db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		body := env.get(fmt.Sprintf("/projects/%d/runs/new", p.ID)).Body.String()
		want := map[string]string{
			"dataset": fmt.Sprintf(`href="/projects/%d/datasets/new"`, p.ID),
			"rubric":  fmt.Sprintf(`href="/projects/%d/rubrics/new"`, p.ID),
		}
		for what, link := range want {
			i := strings.Index(body, `data-testid="missing-`+what+`"`)
			if i < 0 {
				t.Errorf("the form does not say a %s is missing", what)
				continue
			}
			if li := body[i:]; !strings.Contains(li[:strings.Index(li, "</li>")], link) {
				t.Errorf("missing %s: no link %s", what, link)
			}
		}
		// The workspace has the simulated judge: no judge is missing.
		if strings.Contains(body, `data-testid="missing-judge"`) {
			t.Errorf("the form says a judge is missing although the simulated judge exists")
		}
	})
}
