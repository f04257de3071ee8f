package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDifferencesSayHowHumanRatingsWereMapped: where a run's samples show
// judge scores beside human ratings (the run page's differences column, the
// samples table of its downloaded report and of its share link), the
// criterion's human-scale note is repeated exactly when the human ratings
// were mapped onto the judge's scale: an LLM-Eval run judges the demo's
// 1-to-3 criteria on its own 0 to 5, and the note says the rubric's 1 to 3
// were mapped onto it; a BatchEval run judges on the rubric's scale and
// gets none. Before, the note was only in the chart's caption, and the run
// page said the ratings were mapped "from their lowest and highest values",
// which is not what LLM-Eval's mapping does.
func TestDifferencesSayHowHumanRatingsWereMapped(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		batch := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		mapped := 0
		for _, c := range llm.RubricSnapshot.Criteria {
			if c.Lo == 0 && c.Hi == 5 && c.HumanColumn != "" {
				mapped++
			}
		}
		if mapped == 0 {
			t.Fatal("the LLM-Eval run judged no criterion with human ratings on 0 to 5")
		}
		note := `mapped linearly onto the judge&#39;s 0 to 5 (1 becomes 0, 3 becomes 5).`
		cases := []struct {
			name  string
			id    int64
			notes int // on each report page; the run page shows its chosen criterion's
		}{
			{"LLM-Eval on 0 to 5", llm.ID, mapped},
			{"BatchEval on the rubric's scale", batch.ID, 0},
		}
		for _, c := range cases {
			link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(c.id, 10)}, "expires": {"7d"}})
			pages := map[string]int{fmt.Sprintf("/runs/%d?criterion=1", c.id): min(c.notes, 1),
				fmt.Sprintf("/runs/%d/report.html", c.id): c.notes, link: c.notes, link + "/report.html": c.notes}
			for page, want := range pages {
				rec := env.getAs(page)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: GET %s: %d", c.name, page, rec.Code)
				}
				body := rec.Body.String()
				i := strings.Index(body, `data-testid="samples"`)
				if i < 0 {
					t.Fatalf("%s: %s has no samples table", c.name, page)
				}
				samples := body[i:]
				if got := strings.Count(samples, `data-testid="samples-human-scale"`); got != want {
					t.Errorf("%s: %s states the human scale %d times by its samples, want %d", c.name, page, got, want)
				}
				if want > 0 && !strings.Contains(samples, note) {
					t.Errorf("%s: %s does not say how the human ratings were mapped (%q)", c.name, page, note)
				}
				if strings.Contains(samples, "from their lowest and highest values") {
					t.Errorf("%s: %s says the ratings were mapped from their extremes", c.name, page)
				}
			}
		}
	})
}
