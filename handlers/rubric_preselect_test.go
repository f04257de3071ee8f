package handlers

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// A new rubric, from a template or blank, in a project whose datasets
// have exactly one rating column gets that column as every criterion's
// "Human rating column", and the page says so (QA: the Dialogue response
// template left Overall on None beside a dataset column "rating"). With
// several rating columns, or none, nothing is chosen for the person.
func TestNewRubricPreselectsTheOnlyRatingColumn(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		project := func(name string, ratings ...[]string) models.Project {
			p := models.Project{WorkspaceID: env.ws.ID, Name: name}
			if err := env.db.CreateProject(ctx, &p); err != nil {
				t.Fatal(err)
			}
			for i, cols := range ratings {
				row := models.DatasetRow{Position: 1, ExternalID: "a", Data: map[string]string{"id": "a", "text": "hello"}, Ratings: map[string]*float64{}}
				for _, c := range cols {
					v := 3.0
					row.Ratings[c] = &v
				}
				ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: p.ID, Name: fmt.Sprintf("data %d", i), Format: "csv", IDColumn: "id",
					Columns: append([]string{"id", "text"}, cols...), Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: cols}
				if err := env.db.CreateDataset(ctx, &ds, []models.DatasetRow{row}); err != nil {
					t.Fatal(err)
				}
			}
			return p
		}
		one := project("one rating", []string{"rating"}, []string{"rating"}) // a copy with the same column
		several := project("several ratings", []string{"rating", "fluency"})
		none := project("no ratings", []string{})
		chosen := regexp.MustCompile(`(?s)<select id="criteria\[\d+\]\.human".*?</select>`)
		selected := regexp.MustCompile(`<option value="([^"]*)" selected>`)
		for _, tc := range []struct {
			name     string
			p        models.Project
			query    string
			criteria int
			want     string // the column every criterion has chosen
		}{
			{"template, one rating column", one, "?template=dialogue-response", 5, "rating"},
			{"blank, one rating column", one, "", 1, "rating"},
			{"template, several rating columns", several, "?template=dialogue-response", 5, ""},
			{"template, no rating column", none, "?template=dialogue-response", 5, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.get(fmt.Sprintf("/projects/%d/rubrics/new%s", tc.p.ID, tc.query))
				body := rec.Body.String()
				selects := chosen.FindAllString(body, -1)
				if len(selects) != tc.criteria {
					t.Fatalf("%d human column selects, want %d", len(selects), tc.criteria)
				}
				for i, s := range selects {
					got := ""
					if m := selected.FindStringSubmatch(s); m != nil {
						got = m[1]
					}
					if got != tc.want {
						t.Errorf("criterion %d: human column %q chosen, want %q", i+1, got, tc.want)
					}
				}
				said := strings.Contains(html.UnescapeString(body), `“rating” is the only rating column of this project's datasets`)
				if said != (tc.want != "") {
					t.Errorf("the page says the column was chosen: %v, want %v", said, tc.want != "")
				}
			})
		}
	})
}
