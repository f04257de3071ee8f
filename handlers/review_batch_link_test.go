package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReviewQueueLinksTheBatch: with the judge shown, the queue gives each
// round of the sample the judge call it was judged in (the batch, for
// BatchEval; the sample's own calls for the sample-wise methods), as the
// sample page does, for every method; a round without analysis says so.
func TestReviewQueueLinksTheBatch(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		tests := []struct {
			method  string
			batched bool
		}{
			{"batcheval", true},
			{"geval", false},
			{"llmeval", false},
			{"closerlook", false},
		}
		link := regexp.MustCompile(`<a href="/runs/(\d+)/batches/(\d+)" data-testid="review-batch-link">([^<]*)</a>`)
		for _, tt := range tests {
			t.Run(tt.method, func(t *testing.T) {
				form := d.methodForm(tt.method, map[string]string{"rounds": "2", "samples": "3", "llmeval_scale": "0-5"})
				run := env.waitRun(env.launch(form), 60*time.Second)
				body := env.get(fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=disagreement&seed=1&i=0&blind=off", d.dataset.ID, run.ID)).Body.String()
				row := regexp.MustCompile(`href="/runs/\d+/samples/(\d+)">sample page`).FindStringSubmatch(body)
				if row == nil {
					t.Fatalf("no sample shown")
				}
				rowID, _ := strconv.ParseInt(row[1], 10, 64)
				scores, err := env.db.ListRowScores(ctx, run.ID, rowID)
				must(t, err)
				want := map[string]bool{} // the batches that judged the sample on criterion 0
				for _, s := range scores {
					if s.CriterionIndex == 0 {
						want[strconv.FormatInt(s.BatchID, 10)] = true
					}
				}
				got := link.FindAllStringSubmatch(body, -1)
				if len(got) != len(want) || len(got) == 0 {
					t.Fatalf("%d batch links, want one per round (%d)", len(got), len(want))
				}
				for _, m := range got {
					if m[1] != strconv.FormatInt(run.ID, 10) || !want[m[2]] {
						t.Errorf("link to run %s batch %s: not a batch that judged the sample (%v)", m[1], m[2], want)
					}
					if tt.batched != strings.HasPrefix(m[3], "batch ") {
						t.Errorf("link text %q for %s", m[3], tt.method)
					}
				}
				if analyses := strings.Count(body, `data-testid="review-analysis"`); analyses+strings.Count(body, "The judge wrote no analysis of this sample.") != len(want) {
					t.Errorf("%d analyses shown for %d rounds, and no word on the missing ones", analyses, len(want))
				}
			})
		}
	})
}
