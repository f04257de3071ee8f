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

	"github.com/batcheval/batcheval/models"
)

// revisionIn is the revision a page's edit form was filled from ("" when
// the form has none).
func revisionIn(body string) string {
	m := regexp.MustCompile(`name="revision" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// rubricEditValues is the rubric editor's form as a stored rubric fills it,
// saved with the given name and task.
func rubricEditValues(r models.Rubric, name, task, revision string) url.Values {
	f := url.Values{"action": {"save"}, "name": {name}, "task": {task}, "revision": {revision}}
	for i, c := range r.Criteria {
		part := func(p string) string { return "criteria[" + strconv.Itoa(i) + "]." + p }
		f.Set(part("name"), c.Name)
		f.Set(part("stored"), c.Name)
		f.Set(part("description"), c.Description)
		f.Set(part("lo"), strconv.FormatFloat(c.Lo, 'g', -1, 64))
		f.Set(part("hi"), strconv.FormatFloat(c.Hi, 'g', -1, 64))
		f.Set(part("low"), c.Levels.Low)
		f.Set(part("middle"), c.Levels.Middle)
		f.Set(part("high"), c.Levels.High)
		f.Set(part("human"), c.HumanColumn)
	}
	return f
}

// TestEditFormsRefuseSavingOverALaterSave: the rubric editor and the judge
// form carry the revision they were filled from, and a save applies only
// over it. A save made since (an API edit, another tab) is not overwritten:
// the form comes back (409) with the person's changes kept, what the other
// save stored, the plain words saying so, and the new revision, with which
// saving again overwrites. Forms shown again before saving (add a
// criterion, a field to fix) keep the revision they were opened with.
// (QA: a browser save silently overwrote an API edit made meanwhile.)
func TestEditFormsRefuseSavingOverALaterSave(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		real := models.Judge{WorkspaceID: env.ws.ID, Name: "Real", BaseURL: "http://127.0.0.1:9/v1", Model: "m",
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, TimeoutSeconds: 30}
		if err := env.db.SaveJudge(ctx, &real); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, edit, save string
			// form is the object's form saved as name (with a change of
			// its text, theirs or mine).
			form func(name, revision string) url.Values
			// elsewhere saves name the way another writer does.
			elsewhere func(t *testing.T, name string)
			// stored is the stored name and revision.
			stored func(t *testing.T) (string, string)
			// broken makes a form that is shown again unsaved.
			broken func(f url.Values) url.Values
		}{
			{
				name: "rubric", edit: fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), save: fmt.Sprintf("/rubrics/%d", d.rubric.ID),
				form: func(name, revision string) url.Values {
					return rubricEditValues(d.rubric, name, name+" task", revision)
				},
				elsewhere: func(t *testing.T, name string) { // as the API's PUT does
					r, err := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID)
					if err != nil {
						t.Fatal(err)
					}
					r.Name, r.Task = name, name+" task"
					if err := env.db.SaveRubric(ctx, &r); err != nil {
						t.Fatal(err)
					}
				},
				stored: func(t *testing.T) (string, string) {
					r, err := env.db.FindRubric(ctx, env.ws.ID, d.rubric.ID)
					if err != nil {
						t.Fatal(err)
					}
					return r.Name, r.Revision()
				},
				broken: func(f url.Values) url.Values { f.Set("action", "add-criterion"); return f },
			},
			{
				name: "judge", edit: fmt.Sprintf("/judges/%d/edit", real.ID), save: fmt.Sprintf("/judges/%d", real.ID),
				form: func(name, revision string) url.Values {
					return url.Values{"name": {name}, "base_url": {"http://127.0.0.1:9/v1"}, "model": {name + "-model"},
						"temperature": {"0.2"}, "top_p": {"0.9"}, "max_concurrency": {"2"}, "timeout_seconds": {"30"}, "revision": {revision}}
				},
				elsewhere: func(t *testing.T, name string) { // another tab's form
					rec := env.get(fmt.Sprintf("/judges/%d/edit", real.ID))
					f := url.Values{"name": {name}, "base_url": {"http://127.0.0.1:9/v1"}, "model": {name + "-model"},
						"temperature": {"0.2"}, "top_p": {"0.9"}, "max_concurrency": {"2"}, "timeout_seconds": {"30"}, "revision": {revisionIn(rec.Body.String())}}
					if rec := env.postForm(fmt.Sprintf("/judges/%d", real.ID), f); rec.Code != http.StatusSeeOther {
						t.Fatalf("other tab's save = %d %.500s", rec.Code, rec.Body)
					}
				},
				stored: func(t *testing.T) (string, string) {
					j, err := env.db.FindJudge(ctx, env.ws.ID, real.ID)
					if err != nil {
						t.Fatal(err)
					}
					return j.Name, j.Revision()
				},
				broken: func(f url.Values) url.Values { f.Set("temperature", "hot"); return f },
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				opened := revisionIn(env.get(tc.edit).Body.String())
				if _, want := tc.stored(t); opened == "" || opened != want {
					t.Fatalf("edit page's revision %q, want the stored one %q in a hidden field", opened, want)
				}
				// Shown again unsaved: still the revision it was opened on.
				if rec := env.postForm(tc.save, tc.broken(tc.form("Mine", opened))); revisionIn(rec.Body.String()) != opened {
					t.Errorf("form shown again (%d) has revision %q, want the opened %q", rec.Code, revisionIn(rec.Body.String()), opened)
				}

				tc.elsewhere(t, "Theirs")
				_, theirs := tc.stored(t)
				rec := env.postForm(tc.save, tc.form("Mine", opened))
				body := rec.Body.String()
				if rec.Code != http.StatusConflict {
					t.Fatalf("save over a later save = %d, want 409: %.1500s", rec.Code, body)
				}
				if name, _ := tc.stored(t); name != "Theirs" {
					t.Errorf("the later save was overwritten: stored name %q", name)
				}
				saved := body[strings.Index(body, `data-testid="saved-meanwhile"`)+1:]
				for _, want := range []string{"someone saved this " + tc.name + " after you opened it", "your changes are kept below", "Save again to overwrite"} {
					if !strings.Contains(body, want) {
						t.Errorf("conflict page lacks %q", want)
					}
				}
				if !strings.Contains(body, `data-testid="saved-meanwhile"`) || !strings.Contains(saved, "Theirs") {
					t.Errorf("conflict page does not show what the other save stored (Theirs)")
				}
				if !strings.Contains(body, `value="Mine"`) {
					t.Errorf("conflict page lost the person's changes (name Mine)")
				}
				if got := revisionIn(body); got != theirs {
					t.Errorf("conflict page's revision %q, want the new stored one %q", got, theirs)
				}

				// Saving again, with the new revision, overwrites knowingly.
				if rec := env.postForm(tc.save, tc.form("Mine", theirs)); rec.Code != http.StatusSeeOther {
					t.Errorf("save again = %d %.500s", rec.Code, rec.Body)
				}
				if name, _ := tc.stored(t); name != "Mine" {
					t.Errorf("after saving again the stored name is %q, want Mine", name)
				}
			})
		}
	})
}
