package handlers

import (
	"fmt"
	"html"
	"strings"
	"testing"
	"time"
)

// The runs lists' "Agreement r = 0.50" and the dataset page's "SD" are
// explained in visible text next to them (QA: the one only in a hover
// tooltip, which phones do not show, the other not at all).
func TestAgreementAndSDExplainedVisibly(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		projectPath := fmt.Sprintf("/projects/%d", env.project.ID)
		env.waitRun(env.launch(d.launchForm("1", "10")), 30*time.Second)
		for _, path := range []string{"/runs", projectPath} {
			body := html.UnescapeString(env.get(path).Body.String())
			if !strings.Contains(body, "r = ") {
				t.Fatalf("%s shows no agreement figure:\n%s", path, body)
			}
			checkExplained(t, body, map[string][]string{
				"agreement-help": {"Pearson's r between the judge's scores and the human ratings, averaged over the run's criteria", "1 means", "0 that"},
			})
			if help := testidBlock(body, "agreement-help"); strings.Contains(help, "<details") || strings.Contains(help, "hidden") {
				t.Errorf("%s: the explanation is folded away: %s", path, help)
			}
		}
		ds := env.get(fmt.Sprintf("/datasets/%d", d.dataset.ID)).Body.String()
		if !strings.Contains(ds, `<th class="num">SD</th>`) {
			t.Fatalf("the dataset page has no SD column")
		}
		checkExplained(t, ds, map[string][]string{"sd-help": {"SD is the standard deviation", "An SD of 0 means every sample got the same rating"}})
	})
}
