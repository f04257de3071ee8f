package handlers

import (
	"context"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// Human ratings outside a criterion's scale (a -1 and a 10 in a 1 to 5
// rubric's rating column, typos most likely) are named, row and value,
// on the launch form and on the rubric's page where the column is chosen,
// with what the report does with them (QA: nothing said so, and the run
// page silently mapped -1..10 onto 1..5 for the errors). Ratings within
// the scale raise no warning. Each is written `row "r3": rating -1`
// (QA: `"1" (4)` read as a rating of 1 beside a count). One such rating is "it"; a column mostly
// outside the scale is said to be on another scale.
func TestOffScaleRatingsAreNamed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		dataset := func(name string, ratings ...float64) models.Dataset {
			var rows []models.DatasetRow
			for k, r := range ratings {
				v := r
				id := "r" + strconv.Itoa(k+1)
				rows = append(rows, models.DatasetRow{Position: k, ExternalID: id, Data: map[string]string{"id": id, "text": "Hello " + id + "."},
					Ratings: map[string]*float64{"quality": &v}})
			}
			ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, Format: "csv", IDColumn: "id",
				Columns: []string{"id", "text", "quality"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"quality"}}
			if err := env.db.CreateDataset(ctx, &ds, rows); err != nil {
				t.Fatal(err)
			}
			return ds
		}
		typos := dataset("typos", 3, 4, -1, 2, 5, 1, 10, 3, 4)
		clean := dataset("clean", 3, 4, 1, 2, 5)
		one := dataset("one typo", 3, 4, 1, 2, 50)
		tenPoint := dataset("rated out of ten", 7, 9, 6, 10, 2)
		rubric := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Quality", Task: "A response to judge.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Description: "Good.", Lo: 1, Hi: 5, HumanColumn: "quality"}}}
		if err := env.db.SaveRubric(ctx, &rubric); err != nil {
			t.Fatal(err)
		}
		wants := []string{`Dataset “typos” has 2 ratings outside “Quality”'s scale of 1 to 5 in rating column “quality”: row “r3”: rating -1, row “r7”: rating 10.`,
			"If they are typos, correct them in the file", "correlations count them as given", "from its lowest and highest (-1 to 10)"}
		warning := func(body, testid string) string {
			body = html.UnescapeString(body)
			i := strings.Index(body, `data-testid="`+testid+`"`)
			if i < 0 {
				return ""
			}
			return body[i : i+strings.Index(body[i:], "</p>")]
		}
		for _, tc := range []struct {
			name    string
			dataset models.Dataset
			want    []string // nil: no warning
			unwant  []string // what the warning must not say
		}{
			{"ratings outside the scale", typos, wants, []string{"typos typos", "another scale"}},
			{"ratings within the scale", clean, nil, nil},
			// One rating is "a typo", "it" (QA: "If it is a typo typos,
			// correct them").
			{"one rating outside the scale", one, []string{`has 1 rating outside`, `row “r5”: rating 50. If it is a typo, correct it in the file`,
				"report keeps it: its correlations count it as given", "this one rating moves every error"}, []string{"typo typos", "them", "another scale"}},
			// Most of the column outside: the scale is what to check.
			{"most ratings outside the scale", tenPoint, []string{"has 4 ratings outside",
				`Most of the column's ratings lie outside the scale: if the people rated on another scale (the column holds 2 to 10), set “Quality”'s lowest and highest score to that scale.`},
				[]string{"typos typos"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := d.launchForm("1", "10")
				f.Set("dataset", strconv.FormatInt(tc.dataset.ID, 10))
				f.Set("rubric", strconv.FormatInt(rubric.ID, 10))
				f.Set("criteria_of", strconv.FormatInt(rubric.ID, 10))
				f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
				f.Del("criteria")
				f.Add("criteria", "0")
				rec := env.postForm("/runs/estimate", f)
				if rec.Code != http.StatusOK {
					t.Fatalf("estimate: %d", rec.Code)
				}
				w := warning(rec.Body.String(), "estimate-off-scale")
				if (w != "") != (tc.want != nil) {
					t.Fatalf("warning shown %v, want %v:\n%s", w != "", tc.want != nil, rec.Body.String())
				}
				for _, want := range tc.want {
					if !strings.Contains(w, want) {
						t.Errorf("the launch form's warning lacks %q:\n%s", want, w)
					}
				}
				for _, unwant := range tc.unwant {
					if strings.Contains(w, unwant) {
						t.Errorf("the launch form's warning says %q:\n%s", unwant, w)
					}
				}
			})
		}
		// The rubric's page, where the rating column is matched, names them too.
		// One warning per dataset with such ratings: the one on "typos".
		page := html.UnescapeString(env.get("/rubrics/" + strconv.FormatInt(rubric.ID, 10) + "/edit").Body.String())
		w := ""
		for _, part := range strings.Split(page, `data-testid="off-scale-ratings"`)[1:] {
			if part = part[:strings.Index(part, "</p>")]; strings.Contains(part, `Dataset “typos”`) {
				w = part
			}
		}
		for _, want := range wants {
			if !strings.Contains(w, want) {
				t.Errorf("the rubric page's warning lacks %q:\n%s", want, w)
			}
		}
		if strings.Contains(w, `“clean”`) {
			t.Errorf("the rubric page warns about the dataset within the scale:\n%s", w)
		}
	})
}
