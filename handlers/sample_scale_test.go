package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestSamplePageSaysTheTwoScales: an LLM-Eval run judges the demo's 1-to-3
// Coherent on its own 0 to 5, so its sample page says the human rating is
// on the rubric's 1 to 3, gives it mapped onto the judge's 0 to 5 (as the
// report maps it for the errors) and says the judge's score is on 0 to 5;
// a BatchEval run, judging on the rubric's scale, says nothing of scales.
// The old page showed "Human rating 1.00 · final judge score 3.20" alone.
func TestSamplePageSaysTheTwoScales(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		batch := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := llm.RubricSnapshot.Criteria[1]
		h := rows[0].Ratings[crit.HumanColumn]
		if crit.Name != "Coherent" || h == nil || crit.Lo != 0 || crit.Hi != 5 {
			t.Fatalf("criterion %+v, human %v: want Coherent judged on 0 to 5 with a human rating", crit, h)
		}
		mapped := fmt.Sprintf(`data-testid="human-on-judge">%.2f<`, stats.Rescale(*h, 1, 3, 0, 5))
		for _, tc := range []struct {
			name   string
			runID  int64
			wants  []string
			absent []string
		}{
			{"llmeval", llm.ID, []string{`data-testid="human-scale">on the rubric's 1 to 3`, mapped + `/strong> on the judge's 0 to 5`, "on the judge's 0 to 5"}, nil},
			{"batcheval", batch.ID, nil, []string{`data-testid="human-scale"`, `data-testid="human-on-judge"`}},
		} {
			page := fmt.Sprintf("/runs/%d/samples/%d", tc.runID, rows[0].ID)
			rec := env.get(page)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: GET %s: %d", tc.name, page, rec.Code)
			}
			for _, w := range tc.wants {
				if !strings.Contains(body, w) {
					t.Errorf("%s: %s lacks %q", tc.name, page, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(body, a) {
					t.Errorf("%s: %s has %q, want one scale", tc.name, page, a)
				}
			}
		}
	})
}
