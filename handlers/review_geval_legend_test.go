package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewAsksAboutGEvalsScore: on a G-Eval run, the review form (the
// queue with the judge shown, and the sample page) asked "The judge's
// analysis: I agree / I disagree", though G-Eval's judge writes no
// analysis: the only text beside its score is the product's note
// "Probability-weighted score from logprobs.". It now asks about the
// judge's score, as for any sample the judge wrote nothing about; a
// BatchEval run's form still asks about its analysis.
func TestReviewAsksAboutGEvalsScore(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		const (
			aboutScore    = "<legend>The judge's score (it wrote no analysis)</legend>"
			aboutAnalysis = "<legend>The judge's analysis</legend>"
		)
		for _, tt := range []struct {
			method    string
			want, not string
		}{
			{"geval", aboutScore, aboutAnalysis},
			{"batcheval", aboutAnalysis, aboutScore},
		} {
			t.Run(tt.method, func(t *testing.T) {
				f := d.launchForm("1", "10")
				f.Set("method", tt.method)
				f.Set("use_logprobs", "1")
				run := env.waitRun(env.launch(f), 60*time.Second)
				if run.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s)", run.Status, run.Error)
				}
				rows, err := env.db.ListDatasetRows(t.Context(), run.DatasetID, 0, 1)
				must(t, err)
				for _, path := range []string{
					fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=random&seed=1&blind=off", run.DatasetID, run.ID),
					fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[0].ID),
				} {
					rec := env.get(path)
					if rec.Code != http.StatusOK {
						t.Fatalf("%s: %d", path, rec.Code)
					}
					body := rec.Body.String()
					if !strings.Contains(body, tt.want) || strings.Contains(body, tt.not) {
						t.Errorf("%s: the review form does not ask %q (or asks %q)", path, tt.want, tt.not)
					}
				}
			})
		}
	})
}
