package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models/dataimport"
)

// The start guide's steps say where each is done: the project step links
// to the New project form on the same page, and the rubric and launch
// steps name the project page's buttons (New rubric, Launch run); the
// data and rubric steps say the ratings are a column of numbers, chosen
// per criterion. (A newcomer looked for "Rubrics" in the header.)
func TestStartGuideSaysWhereEachStepIsDone(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		home := env.get("/").Body.String()
		i := strings.Index(home, `data-testid="start-guide"`)
		if i < 0 {
			t.Fatal("no start guide")
		}
		guide := home[i : i+strings.Index(home[i:], "</section>")]
		for _, tc := range []struct{ step, want string }{
			{"guide-project", `href="#new-project"`},
			{"guide-project", "column of numbers"},
			{"guide-rubric", "<em>New rubric</em>"},
			{"guide-rubric", "column holding your ratings"},
			{"guide-launch", "<em>Launch run</em>"},
		} {
			j := strings.Index(guide, fmt.Sprintf(`data-testid="%s"`, tc.step))
			if j < 0 {
				t.Errorf("the guide has no step %s", tc.step)
				continue
			}
			step := guide[j : j+strings.Index(guide[j:], "</li>")]
			if !strings.Contains(step, tc.want) {
				t.Errorf("step %s lacks %q: %s", tc.step, tc.want, step)
			}
		}
		if !strings.Contains(home, `id="new-project"`) {
			t.Error(`the guide links to #new-project, which the page lacks`)
		}
		// The project page has the buttons the guide names.
		project := env.get(fmt.Sprintf("/projects/%d", env.project.ID)).Body.String()
		for _, button := range []string{">New rubric<", ">Launch run<"} {
			if !strings.Contains(project, button) {
				t.Errorf("the project page has no %s button the guide names", button)
			}
		}
	})
}

// TestStartGuideNamesEveryAcceptedFile: the start guide's data step names
// every file ending the upload form's file input accepts (each one the
// reader takes, DetectFormat), the separators and the encodings it reads.
// It named CSV, JSON Lines and JSON only: a newcomer with a .tsv file, or
// Excel's semicolons or "Unicode Text" (UTF-16), read that as a no.
func TestStartGuideNamesEveryAcceptedFile(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		home := env.get("/").Body.String()
		i := strings.Index(home, `data-testid="guide-project"`)
		if i < 0 {
			t.Fatal("the start guide has no data step")
		}
		step := home[i : i+strings.Index(home[i:], "</li>")]
		form := env.get(fmt.Sprintf("/projects/%d/datasets/new", env.project.ID)).Body.String()
		m := regexp.MustCompile(`name="file" accept="([^"]+)"`).FindStringSubmatch(form)
		if m == nil {
			t.Fatal("the upload form's file input has no accept list")
		}
		// What each ending's file starts with, as the reader is given it.
		content := map[string]string{".csv": "id,text\n1,a\n", ".tsv": "id\ttext\n1\ta\n", ".txt": "id\ttext\n1\ta\n",
			".jsonl": `{"id": 1}` + "\n", ".json": `[{"id": 1}]`}
		for _, ext := range strings.Split(m[1], ",") {
			if _, err := dataimport.DetectFormat("data"+ext, []byte(content[ext])); err != nil {
				t.Errorf("the upload form accepts %s, which the reader refuses: %v", ext, err)
			}
			if !strings.Contains(step, ext) {
				t.Errorf("the guide's data step does not name %s, which the upload accepts: %s", ext, step)
			}
		}
		for _, want := range []string{"semicolons", "tabs", "UTF-8", "UTF-16", "Windows-1252"} {
			if !strings.Contains(step, want) {
				t.Errorf("the guide's data step does not say the upload reads %s: %s", want, step)
			}
		}
	})
}
