package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestNoScoresShowsUnreadableAnswers: a run whose judge answered every call
// with text no score can be read from says so on its page, in its
// downloaded report and on its share link (page and report) as before, and
// now also shows up to three of those answers with what was wrong with
// each, cut, and escaped: the judge's <script> is text, never markup. Only
// the judge's output is shown, never the prompt (a share link's visitor
// reads it); the run page links each answer's page, the reports link
// nowhere. Before, the reports said only that no score could be read.
func TestNoScoresShowsUnreadableAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		answer := "I would rather not rate these. <script>alert('judge')</script> " + strings.Repeat("Still no number here. ", 40) + "TAIL-BEYOND-THE-CUT"
		d := env.demo()
		run, _ := env.runOnFakeJudge("Evasive judge", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
				"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10},
			})
		}, d.launchForm("1", "10"))
		id := run.ID
		if run.Status != models.RunFailed || run.BatchesFailed != 0 || run.BatchesDone != run.BatchesTotal {
			t.Fatalf("run %s, %d of %d batches done, %d failed: want every call answered and the run failed for want of a score",
				run.Status, run.BatchesDone, run.BatchesTotal, run.BatchesFailed)
		}
		batches, err := env.db.ListBatches(context.Background(), id)
		must(t, err)
		prompt := "You are an impartial, experienced evaluator"
		if !strings.Contains(batches[0].Request, prompt) {
			t.Fatalf("the prompt does not hold %q: the test proves nothing", prompt)
		}
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(id, 10)}, "expires": {"7d"}})
		cases := []struct {
			page  string
			links bool
		}{
			{fmt.Sprintf("/runs/%d", id), true},
			{fmt.Sprintf("/runs/%d/report.html", id), false},
			{link, false},
			{link + "/report.html", false},
		}
		for _, c := range cases {
			rec := env.getAs(c.page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", c.page, rec.Code)
			}
			body := rec.Body.String()
			i := strings.Index(body, `data-testid="unreadable-examples"`)
			if i < 0 || !strings.Contains(body, `data-testid="no-scores"`) {
				t.Errorf("%s: want the no-scores card with examples of the answers", c.page)
				continue
			}
			ex := body[i:]
			if n := strings.Count(ex, `data-testid="unreadable-example"`); n != min(3, len(batches)) {
				t.Errorf("%s: %d examples, want %d", c.page, n, min(3, len(batches)))
			}
			for _, want := range []string{"I would rather not rate these. &lt;script&gt;alert(&#39;judge&#39;)&lt;/script&gt;", "no scores found in the answer",
				"The answer goes on.", d.rubric.Criteria[0].Name + ", round 1, batch 1"} {
				if !strings.Contains(ex, want) {
					t.Errorf("%s: the examples lack %q", c.page, want)
				}
			}
			for _, not := range []string{"<script>alert", "TAIL-BEYOND-THE-CUT", prompt} {
				if strings.Contains(body, not) {
					t.Errorf("%s shows %q", c.page, not)
				}
			}
			batchLink := fmt.Sprintf(`href="/runs/%d/batches/`, id)
			if got := strings.Contains(ex, batchLink); got != c.links {
				t.Errorf("%s: links each answer's page: %v, want %v", c.page, got, c.links)
			}
		}
	})
}
