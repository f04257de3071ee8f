package handlers

import (
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// After an import, the message and the dataset's page point on (QA: they
// did not): the message names the next steps, and the page links "write a
// rubric for this project" and "launch a run with this dataset" (the
// launch form with this dataset chosen) for the roles that may do them;
// a viewer is offered neither.
func TestDatasetPagePointsToNextSteps(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("qa.csv", goodCSV)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Quiz answers"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d: %s", rec.Code, rec.Body)
		}
		var flash string
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == flashCookie {
				_, enc, _ := strings.Cut(ck.Value, ":")
				b, _ := base64.RawURLEncoding.DecodeString(enc)
				flash = string(b)
			}
		}
		for _, want := range []string{`Imported 3 rows into “Quiz answers”.`, "Next: write a rubric", "launch a run with this dataset"} {
			if !strings.Contains(flash, want) {
				t.Errorf("the import message lacks %q: %s", want, flash)
			}
		}
		dsPath := rec.Header().Get("Location")
		dsID := strings.TrimPrefix(dsPath, "/datasets/")
		links := []string{
			fmt.Sprintf(`href="/projects/%d/rubrics/new"`, env.project.ID),
			fmt.Sprintf(`href="/projects/%d/runs/new?dataset=%s"`, env.project.ID, dsID),
		}
		// The launch form it leads to chooses this dataset (asked before
		// accounts exist: then the local user must sign in).
		form := env.get(fmt.Sprintf("/projects/%d/runs/new?dataset=%s", env.project.ID, dsID)).Body.String()
		if !strings.Contains(form, fmt.Sprintf(`<option value="%s" selected>`, dsID)) {
			t.Error("the launch form does not choose the new dataset")
		}
		for _, role := range []models.Role{models.RoleViewer, models.RoleEditor, models.RoleOwner} {
			t.Run(string(role), func(t *testing.T) {
				u := env.createUser(env.ws.ID, string(role)+"@next.test", role)
				page := env.send(http.MethodGet, dsPath, nil, "", env.sessionCookie(u))
				if page.Code != http.StatusOK {
					t.Fatalf("dataset page: %d", page.Code)
				}
				body := html.UnescapeString(page.Body.String())
				want := role.AtLeast(models.RoleEditor)
				i := strings.Index(body, `data-testid="dataset-next-steps"`)
				if (i >= 0) != want {
					t.Fatalf("next steps shown %v, want %v", i >= 0, want)
				}
				if !want {
					for _, l := range links {
						if strings.Contains(body, l) {
							t.Errorf("a viewer is offered %s", l)
						}
					}
					return
				}
				box := body[i : i+strings.Index(body[i:], "</div>")]
				for _, w := range append(links, "Write a rubric for this project", "Launch a run with this dataset") {
					if !strings.Contains(box, w) {
						t.Errorf("the next steps lack %s:\n%s", w, box)
					}
				}
			})
		}
	})
}
