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

	"github.com/batcheval/batcheval/models"
)

// TestAlignmentAcceptRefusesSavingOverALaterRubricSave: the alignment
// page's accept form carries the rubric's revision it was opened on, as
// the rubric editor does. A save of the rubric made since (another tab,
// the editor, a script) refuses the accept (409): nothing is stored, the
// person's draft is kept, the aligned criterion is shown as the rubric now
// holds it, and accepting again with the new revision applies the draft.
// A draft refused for what it says (422) keeps the revision it was opened
// on. (QA: the accept saved unconditionally, so a second tab put this
// criterion's old wording back over a newer save.)
func TestAlignmentAcceptRefusesSavingOverALaterRubricSave(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		if src.Status != models.RunSucceeded {
			t.Fatalf("source run %s (%s)", src.Status, src.Error)
		}
		rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("start alignment = %d", rec.Code)
		}
		aPath := rec.Header().Get("Location")
		aID, _ := strconv.ParseInt(strings.TrimPrefix(aPath, "/alignments/"), 10, 64)
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		if err != nil {
			t.Fatal(err)
		}
		rubricNow := func() models.Rubric {
			r, err := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		opened := revisionIn(env.get(aPath).Body.String())
		if opened == "" || opened != rubricNow().Revision() {
			t.Errorf("alignment page's revision %q, want the rubric's %q", opened, rubricNow().Revision())
		}
		accept := func(high, revision string) url.Values {
			f := draftFormValues(a.Draft, high)
			f.Set("revision", revision)
			return f
		}
		// Refused for its content: shown again with the revision it was opened on.
		bad := accept("Mine, high", opened)
		bad.Set("example_score", "lots")
		if rec := env.postForm(aPath+"/accept", bad); rec.Code != http.StatusUnprocessableEntity || revisionIn(rec.Body.String()) != opened {
			t.Errorf("refused draft = %d with revision %q, want 422 with %q", rec.Code, revisionIn(rec.Body.String()), opened)
		}

		// Another tab saves the rubric, rewording this criterion's high end.
		theirs := rubricNow()
		theirs.Criteria[0].Levels.High = "Their <newer> wording of the high end"
		if err := env.db.SaveRubric(ctx, &theirs); err != nil {
			t.Fatal(err)
		}
		rec = env.postForm(aPath+"/accept", accept("Mine, high", opened))
		body := rec.Body.String()
		if rec.Code != http.StatusConflict {
			t.Fatalf("accept over a later rubric save = %d, want 409: %.800s", rec.Code, body)
		}
		if r := rubricNow(); r.Version != theirs.Version || r.Criteria[0].Levels.High != theirs.Criteria[0].Levels.High {
			t.Errorf("the later save was overwritten: version %d, high %q", r.Version, r.Criteria[0].Levels.High)
		}
		if a2, _ := env.db.FindAlignment(ctx, env.ws.ID, aID); a2.Status != models.AlignmentDrafted {
			t.Errorf("the refused accept changed the alignment to %s", a2.Status)
		}
		i := strings.Index(body, `data-testid="saved-meanwhile"`)
		if i < 0 || !strings.Contains(body[i:], templ.EscapeString(theirs.Criteria[0].Levels.High)) {
			t.Errorf("the conflict page does not show the criterion as the other save left it")
		}
		if !regexp.MustCompile(`<textarea id="high" name="high"[^>]*>Mine, high</textarea>`).MatchString(body) {
			t.Errorf("the conflict page lost the person's draft")
		}
		if !strings.Contains(body, "after you opened this page") || !strings.Contains(body, "Accept again") {
			t.Errorf("the conflict page does not say what happened and what to do")
		}
		if got := revisionIn(body); got != rubricNow().Revision() {
			t.Errorf("conflict page's revision %q, want the stored %q", got, rubricNow().Revision())
		}
		// Accepting again, with the new revision, applies the draft.
		if rec := env.postForm(aPath+"/accept", accept("Mine, high", revisionIn(body))); rec.Code != http.StatusSeeOther {
			t.Fatalf("accept again = %d %.500s", rec.Code, rec.Body)
		}
		if r := rubricNow(); r.Criteria[0].Levels.High != "Mine, high" {
			t.Errorf("after accepting again the high end is %q", r.Criteria[0].Levels.High)
		}
	})
}

// TestRenameRefusesRenamingOverALaterRename: the manage box's rename form
// carries the name it was shown with, and renames only over it. A rename
// made since (another tab, the API) is not overwritten: the form comes
// back (409) with the person's name kept and the current one named, and
// renaming from there replaces it knowingly. (QA: renames saved
// unconditionally.)
func TestRenameRefusesRenamingOverALaterRename(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		real := models.Judge{WorkspaceID: env.ws.ID, Name: "Real", BaseURL: "http://127.0.0.1:9/v1", Model: "m",
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, TimeoutSeconds: 30}
		if err := env.db.SaveJudge(ctx, &real); err != nil {
			t.Fatal(err)
		}
		wasRE := regexp.MustCompile(`name="was" value="([^"]*)"`)
		for _, tc := range []struct {
			kind models.Kind
			id   int64
			page string
		}{
			{models.KindProject, env.project.ID, fmt.Sprintf("/projects/%d", env.project.ID)},
			{models.KindDataset, d.dataset.ID, fmt.Sprintf("/datasets/%d", d.dataset.ID)},
			{models.KindRubric, d.rubric.ID, fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID)},
			{models.KindJudge, real.ID, fmt.Sprintf("/judges/%d/edit", real.ID)},
		} {
			t.Run(string(tc.kind), func(t *testing.T) {
				name := func() string {
					var names []string
					env.db.Gorm.Table(string(tc.kind)+"s").Where("id = ?", tc.id).Pluck("name", &names)
					return strings.Join(names, "")
				}
				page := env.get(tc.page)
				shown := name()
				if m := wasRE.FindStringSubmatch(page.Body.String()); page.Code != http.StatusOK || m == nil || m[1] != shown {
					t.Errorf("page %s = %d without the name its rename form was shown with (%q)", tc.page, page.Code, shown)
				}
				rename := lifecycleBase(tc.kind, tc.id) + "/rename"
				if _, err := env.db.Rename(ctx, env.ws.ID, tc.kind, tc.id, "Theirs"); err != nil {
					t.Fatal(err)
				}
				rec := env.postForm(rename, url.Values{"name": {"Mine"}, "was": {shown}})
				body := rec.Body.String()
				if rec.Code != http.StatusConflict || name() != "Theirs" {
					t.Fatalf("rename over a later rename = %d, stored %q; want 409 and Theirs", rec.Code, name())
				}
				if !strings.Contains(body, `value="Mine"`) || !strings.Contains(body, "Theirs") || !strings.Contains(body, "after you opened the page") {
					t.Errorf("the conflict page does not keep Mine and name Theirs")
				}
				again := wasRE.FindStringSubmatch(body)
				if again == nil || again[1] != "Theirs" {
					t.Fatalf("the conflict page's form was shown with %v, want Theirs", again)
				}
				if rec := env.postForm(rename, url.Values{"name": {"Mine"}, "was": {again[1]}}); rec.Code != http.StatusSeeOther || name() != "Mine" {
					t.Errorf("rename again = %d, stored %q; want 303 and Mine", rec.Code, name())
				}
			})
		}
	})
}
