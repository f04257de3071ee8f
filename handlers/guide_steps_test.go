package handlers

import (
	"fmt"
	"strings"
	"testing"
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
