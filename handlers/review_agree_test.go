package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReviewFormAsksAboutTheScoreWithoutAnAnalysis: LLM-Eval writes no
// analysis, and its sample page says "The judge wrote no analysis of this
// sample", yet the review form asked whether the reviewer agrees with the
// judge's analysis. Where no round shows an analysis, the queue's form and
// the sample page's form now ask about the judge's score; where one does,
// both still ask about the analysis.
func TestReviewFormAsksAboutTheScoreWithoutAnAnalysis(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		tests := []struct {
			method     string
			noAnalysis bool
		}{
			{"batcheval", false},
			{"llmeval", true},
		}
		const (
			aboutScore    = `<legend>The judge's score (it wrote no analysis)</legend>`
			aboutAnalysis = `<legend>The judge's analysis</legend>`
		)
		for _, tt := range tests {
			t.Run(tt.method, func(t *testing.T) {
				form := d.methodForm(tt.method, map[string]string{"rounds": "1", "samples": "3", "llmeval_scale": "0-5"})
				run := env.waitRun(env.launch(form), 60*time.Second)
				queue := env.get(fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=random&seed=1&i=0&blind=off", d.dataset.ID, run.ID)).Body.String()
				m := regexp.MustCompile(`href="(/runs/\d+/samples/\d+)">sample page`).FindStringSubmatch(queue)
				if m == nil {
					t.Fatal("the queue shows no sample")
				}
				sample := env.get(m[1]).Body.String()
				// The sample page's review panel, every criterion's form.
				i := strings.Index(sample, `data-testid="sample-review"`)
				if i < 0 {
					t.Fatal("the sample page has no review panel")
				}
				panel := sample[i:]
				if said := strings.Contains(sample[:i], "The judge wrote no analysis of this sample."); said != tt.noAnalysis {
					t.Fatalf("the sample page says the judge wrote no analysis: %v, want %v", said, tt.noAnalysis)
				}
				for page, body := range map[string]string{"queue": queue, "sample page": panel} {
					if said := strings.Contains(body, "The judge wrote no analysis of this sample."); page == "queue" && said != tt.noAnalysis {
						t.Fatalf("%s: says the judge wrote no analysis: %v, want %v", page, said, tt.noAnalysis)
					}
					want, not := aboutAnalysis, aboutScore
					if tt.noAnalysis {
						want, not = aboutScore, aboutAnalysis
					}
					if !strings.Contains(body, want) {
						t.Errorf("%s: the review form lacks %s", page, want)
					}
					if strings.Contains(body, not) {
						t.Errorf("%s: the review form asks %s", page, not)
					}
				}
			})
		}
	})
}
