package handlers

import (
	"context"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// The launch form warns when the chosen dataset lacks the column a chosen
// criterion takes its human ratings from (QA: a project's first upload, the
// main dataset by default, was a file without ratings; the rubric named the
// second file's column, the form said nothing and the run page could only
// say that no sample had a rating). The warning names the dataset, the
// column and the criterion, and the project's datasets that have the
// column, or, when none has, points to the rubric. It never refuses.
func TestLaunchWarnsWhenDatasetLacksRatingColumn(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		dataset := func(name string, ratings ...string) models.Dataset {
			row := models.DatasetRow{Position: 0, ExternalID: "a", Data: map[string]string{"id": "a", "text": "Hello."}, Ratings: map[string]*float64{}}
			for _, c := range ratings {
				v := 3.0
				row.Ratings[c] = &v
				row.Data[c] = "3"
			}
			ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, Format: "csv", IDColumn: "id",
				Columns: append([]string{"id", "text"}, ratings...), Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: append([]string{}, ratings...)}
			if err := env.db.CreateDataset(ctx, &ds, []models.DatasetRow{row}); err != nil {
				t.Fatal(err)
			}
			return ds
		}
		unrated := dataset("no ratings")
		helpful := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Helpful", Task: "A response to judge.",
			Criteria: []evaluator.Criterion{
				{Name: "Helpful", Description: "Helps.", Lo: 1, Hi: 5, HumanColumn: "helpful"},
				{Name: "Overall", Description: "Overall.", Lo: 1, Hi: 5, HumanColumn: "overall"},
			}}
		if err := env.db.SaveRubric(ctx, &helpful); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name     string
			dataset  models.Dataset
			rubric   models.Rubric
			criteria []int
			want     []string // in the warning; nil: no warning
		}{
			{"demo data and rubric", d.dataset, d.rubric, []int{0, 1}, nil},
			{"demo rubric on data without ratings", unrated, d.rubric, []int{0},
				[]string{`Dataset “no ratings” has no rating column “engaging” for “Engaging”`, `your ratings of “Engaging”`,
					`The ratings are in dataset “Demo dialogues”: choose it under Dataset above`, "can still be launched"}},
			{"column only in no dataset", d.dataset, helpful, []int{0, 1},
				[]string{`“helpful” for “Helpful”`, `your ratings of “Helpful”;`, "Human rating column", "/rubrics/" + strconv.FormatInt(helpful.ID, 10) + "/edit"}},
			{"the criterion the dataset has", d.dataset, helpful, []int{1}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := d.launchForm("1", "10")
				f.Set("dataset", strconv.FormatInt(tc.dataset.ID, 10))
				f.Set("rubric", strconv.FormatInt(tc.rubric.ID, 10))
				f.Set("criteria_of", strconv.FormatInt(tc.rubric.ID, 10))
				f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
				f.Del("criteria")
				for _, k := range tc.criteria {
					f.Add("criteria", strconv.Itoa(k))
				}
				rec := env.postForm("/runs/estimate", f)
				if rec.Code != http.StatusOK {
					t.Fatalf("estimate: %d", rec.Code)
				}
				body := html.UnescapeString(rec.Body.String())
				i := strings.Index(body, `data-testid="estimate-not-in-dataset"`)
				if (i >= 0) != (tc.want != nil) {
					t.Fatalf("warning shown %v, want %v:\n%s", i >= 0, tc.want != nil, body)
				}
				if i < 0 {
					return
				}
				w := body[i : i+strings.Index(body[i:], "</p>")]
				for _, want := range tc.want {
					if !strings.Contains(w, want) {
						t.Errorf("the warning lacks %q:\n%s", want, w)
					}
				}
			})
		}
		// The form as first shown warns too, and a warning is no refusal.
		f := d.launchForm("1", "10")
		f.Set("dataset", strconv.FormatInt(unrated.ID, 10))
		page := env.get("/projects/" + strconv.FormatInt(env.project.ID, 10) + "/runs/new?dataset=" + strconv.FormatInt(unrated.ID, 10)).Body.String()
		if !strings.Contains(page, `data-testid="estimate-not-in-dataset"`) {
			t.Errorf("the launch form on a dataset without the rubric's ratings does not warn")
		}
		runID := env.launch(f)
		env.waitRun(runID, 30*time.Second)

		// The run's page then says which column the dataset lacks, not
		// only that no sample has a rating, and links a new launch.
		body := html.UnescapeString(env.get("/runs/" + strconv.FormatInt(runID, 10)).Body.String())
		i := strings.Index(body, `data-testid="no-human-help"`)
		if i < 0 {
			t.Fatalf("the run page has no help where the criterion has no ratings")
		}
		help := body[i : i+strings.Index(body[i:], "</p>")]
		for _, want := range []string{`ratings of Engaging from the column “engaging”`, `no ratings</a> does not have`, `href="/projects/` + strconv.FormatInt(env.project.ID, 10) + `/runs/new"`} {
			if !strings.Contains(help, want) {
				t.Errorf("the run page's help lacks %q:\n%s", want, help)
			}
		}
	})
}
