package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRubricEditorMarksRatingColumnsNoDatasetHas: a rubric whose human
// rating column (or an annotator column) no dataset of the project has any
// more (the dataset was deleted, or uploaded again without it) shows that
// column in the editor marked "not in any dataset of this project"; saving
// the rubric unchanged keeps it, with a warning, while a column newly
// chosen that no dataset has is still refused. Before, the editor listed
// the column like any other, saving the unchanged rubric failed, and an
// annotator column no dataset had was dropped without a word.
func TestRubricEditorMarksRatingColumnsNoDatasetHas(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		r := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Stale columns", Task: "A reply.",
			Criteria: []evaluator.Criterion{{Name: "Helpful", Description: "Does it help?", Lo: 1, Hi: 5,
				Levels:      evaluator.Levels{Low: "no", Middle: "partly", High: "fully"},
				HumanColumn: "overall", AnnotatorColumns: []string{"coherent", "engaging"}}}}
		if err := env.db.SaveRubric(ctx, &r); err != nil {
			t.Fatal(err)
		}
		// The project's datasets keep only "coherent" of their rating columns.
		ds, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil || len(ds) == 0 {
			t.Fatalf("datasets: %v (%d)", err, len(ds))
		}
		for i := range ds {
			ds[i].RatingColumns = []string{"coherent"}
			if err := env.db.Gorm.Select("rating_columns").Save(&ds[i]).Error; err != nil {
				t.Fatal(err)
			}
		}

		page := env.get(rubricEditURLFor(r.ID)).Body.String()
		for _, want := range []string{
			`<option value="overall" selected>overall (not in any dataset of this project)</option>`,
			`data-testid="stale-human-column"`,
			`value="engaging" checked> engaging (not in any dataset of this project)`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("editor lacks %q:\n%s", want, testidBlock(page, "criteria"))
			}
		}
		if strings.Contains(page, "coherent (not in any dataset") {
			t.Errorf("a column the datasets have is marked as missing")
		}

		unchanged := rubricFormValues("save", "1", "5")
		unchanged.Set("name", r.Name)
		unchanged.Set("criteria[0].stored", "Helpful")
		unchanged["criteria[0].annotators"] = []string{"coherent", "engaging"}
		newlyChosen := rubricFormValues("save", "1", "5")
		newlyChosen.Set("name", r.Name)
		newlyChosen.Set("criteria[0].stored", "Helpful")
		newlyChosen.Set("criteria[0].human", "made_up")
		for _, tc := range []struct {
			name   string
			form   map[string][]string
			status int
		}{
			{"unchanged rubric saves", unchanged, http.StatusSeeOther},
			{"a new unknown column is refused", newlyChosen, http.StatusUnprocessableEntity},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.postForm(fmt.Sprintf("/rubrics/%d", r.ID), tc.form)
				if rec.Code != tc.status {
					t.Fatalf("save: status %d, want %d: %s", rec.Code, tc.status, html.UnescapeString(testidBlock(rec.Body.String(), "field-error-criteria[0].human")))
				}
				if tc.status != http.StatusSeeOther {
					return
				}
				got, err := env.db.FindRubric(ctx, env.ws.ID, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if c := got.Criteria[0]; c.HumanColumn != "overall" || !slices.Equal(c.AnnotatorColumns, []string{"coherent", "engaging"}) {
					t.Errorf("saved columns: human %q, annotators %q; want them kept", c.HumanColumn, c.AnnotatorColumns)
				}
				if flash := flashText(t, rec); !strings.HasPrefix(rec.Header().Get("Set-Cookie"), flashCookie+"=warning:") ||
					!strings.Contains(flash, `the human rating column “overall” is in none of this project's datasets`) {
					t.Errorf("the save does not warn about the kept column: %q (%s)", flash, rec.Header().Get("Set-Cookie"))
				}
			})
		}

		// The API keeps them as well: a rubric read and sent back as it is
		// saves; a new unknown column is refused there too.
		a := newAPIClient(t, env)
		u := env.createUser(env.ws.ID, "editor@stale.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, u.ID)
		path := fmt.Sprintf("/api/v1/rubrics/%d", r.ID)
		read := a.call(http.MethodGet, path, tok, nil, "")
		if read.Code != http.StatusOK {
			t.Fatalf("API read: %d", read.Code)
		}
		if rec := a.call(http.MethodPut, path, tok, read.Body.Bytes(), "application/json"); rec.Code != http.StatusOK {
			t.Errorf("API: sending the rubric back as read: %d, want 200: %s", rec.Code, rec.Body)
		}
		made := strings.Replace(read.Body.String(), `"human_column":"overall"`, `"human_column":"made_up"`, 1)
		if made == read.Body.String() {
			t.Fatalf("no human_column in %s", read.Body)
		}
		if rec := a.call(http.MethodPut, path, tok, []byte(made), "application/json"); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("API: a new unknown column: %d, want 422: %s", rec.Code, rec.Body)
		}
	})
}

func rubricEditURLFor(id int64) string { return fmt.Sprintf("/rubrics/%d/edit", id) }
