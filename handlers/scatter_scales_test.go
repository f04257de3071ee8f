package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An LLM-Eval run judges the demo's Coherent (rubric 1 to 3) on its own 0
// to 5, and the errors map the human ratings from the rubric's 1 to 3 onto
// it (1 becomes 0, 3 becomes 5). Its judge-against-human chart, on the
// run's page, its share link and its downloaded report alike, says which
// scale each axis is on and that their ends line up as that mapping has
// them; before, it drew "judge final score" against "human rating" as if
// both were on 0 to 5. A BatchEval run judges on the rubric's scale: its
// chart keeps the plain labels.
func TestScatterSaysEachAxisScale(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		if c := llm.RubricSnapshot.Criteria[1]; c.Lo != 0 || c.Hi != 5 || c.Name != "Coherent" {
			t.Fatalf("LLM-Eval judged %s on %g to %g, want Coherent on 0 to 5", c.Name, c.Lo, c.Hi)
		}
		batch := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		card := regexp.MustCompile(`(?s)data-testid="criterion-card".*?<h2>Coherent\b.*?data-testid="scatter-caption">.*?</figcaption>`)
		scatterOf := func(page string) string {
			t.Helper()
			rec := env.getAs(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			m := card.FindString(rec.Body.String())
			if m == "" {
				t.Fatalf("%s has no chart of Coherent", page)
			}
			return m[strings.LastIndex(m, `data-testid="criterion-card"`):]
		}
		pages := func(id int64) []string {
			link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(id, 10)}, "expires": {"7d"}})
			return []string{fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d/report.html", id), link, link + "/report.html"}
		}
		for _, page := range pages(llm.ID) {
			chart := scatterOf(page)
			for _, want := range []string{">judge final score (0 to 5)</text>", ">human rating (rubric&#39;s 1 to 3)</text>",
				`data-testid="scatter-scales">The axes have scales of their own: the judge&#39;s 0 to 5 across, the rubric&#39;s 1 to 3 up, drawn so that 1 lines up with 0 and 3 with 5`} {
				if !strings.Contains(chart, want) {
					t.Errorf("%s: Coherent's chart lacks %q", page, want)
				}
			}
		}
		for _, page := range pages(batch.ID) {
			chart := scatterOf(page)
			if !strings.Contains(chart, ">judge final score</text>") || !strings.Contains(chart, ">human rating</text>") ||
				strings.Contains(chart, "scatter-scales") {
				t.Errorf("%s: the chart of a run on the rubric's scale names scales", page)
			}
		}
	})
}
