package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPagesUseTheMethodsWords: the pages ask the method what it calls a
// round and a call unit. G-Eval has no rounds and one sample per unit, so
// its pages must not say "Round 1 of 1" or "batch 135", and its generated
// evaluation steps are shown on its run page.
func TestPagesUseTheMethodsWords(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := env.demo().dataset
		cases := []struct {
			method                             string
			runWant, runNot, unitWant, unitNot []string
			sampleWant, sampleNot              []string
		}{
			{models.MethodGEval,
				[]string{"Samples <span data-field=\"batches_done\">", `data-testid="evaluation-steps"`, `data-testid="steps"`, "1. ", "probability-weighted form score", "Failed samples"},
				[]string{`data-field="round"`, "Failed batches", `data-testid="rounds"`, "Batches <span"},
				[]string{`aria-current="page">Sample</li>`, ", sample "}, []string{"round 1", "batch "},
				[]string{"Score: ", "the judge's calls for this sample"}, []string{"Round 1:", "in <a"}},
			{models.MethodBatchEval,
				// A finished run shows no live round counter (it has no current
				// round: TestRunProgressBlockSaysWhatIsTrue, which also checks
				// the counter's word on a running run).
				[]string{"Batches <span data-field=\"batches_done\">", `data-testid="rounds"`, "2 rounds × batches of 10"},
				[]string{`data-testid="evaluation-steps"`},
				[]string{`aria-current="page">Batch</li>`, ", round 1, batch 1"}, nil,
				[]string{"Round 1:", "in <a"}, nil},
		}
		for _, tc := range cases {
			run := env.startRun(ds, tc.method, tc.method, nil)
			if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("%s: run %s (%s)", tc.method, got.Status, got.Error)
			}
			batches, err := env.db.ListBatches(ctx, run.ID)
			if err != nil || len(batches) == 0 {
				t.Fatalf("%s: %d batches, %v", tc.method, len(batches), err)
			}
			b := batches[0]
			pages := []struct {
				path      string
				want, not []string
			}{
				{fmt.Sprintf("/runs/%d", run.ID), tc.runWant, tc.runNot},
				{fmt.Sprintf("/runs/%d/batches/%d", run.ID, b.ID), tc.unitWant, tc.unitNot},
				{fmt.Sprintf("/runs/%d/samples/%d", run.ID, b.RowIDs[0]), tc.sampleWant, tc.sampleNot},
			}
			for _, p := range pages {
				body := env.get(p.path).Body.String()
				if i := strings.Index(body, "<main"); i >= 0 {
					body = body[i:]
				}
				for _, w := range p.want {
					if !strings.Contains(body, w) {
						t.Errorf("%s %s: page lacks %q", tc.method, p.path, w)
					}
				}
				for _, w := range p.not {
					if strings.Contains(body, w) {
						t.Errorf("%s %s: page should not contain %q", tc.method, p.path, w)
					}
				}
			}
		}
	})
}

// TestFinishedWithGapsIsShown: a run with missing scores says so on its
// page and in the runs list, in words.
func TestFinishedWithGapsIsShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := env.startRun(env.demo().dataset, "gappy", models.MethodBatchEval, nil)
		if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", got.Status, got.Error)
		}
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).
			Updates(map[string]any{"status": models.RunFinishedWithGaps, "error": "3 of 60 scores are missing (failed calls or unreadable answers)"}).Error; err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/runs", fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/projects/%d", run.ProjectID)} {
			body := env.get(path).Body.String()
			// The run page's badge also carries data-run-status (kept live by app.js).
			if !strings.Contains(body, `<span class="badge finished_with_gaps" data-testid="run-status">finished with gaps</span>`) &&
				!strings.Contains(body, `<span class="badge finished_with_gaps" data-testid="run-status" data-run-status>finished with gaps</span>`) {
				t.Errorf("%s: no \"finished with gaps\" badge", path)
			}
		}
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if !strings.Contains(body, `data-testid="run-gaps"`) || !strings.Contains(body, "3 of 60 scores are missing") {
			t.Errorf("run page does not explain the gaps")
		}
		if strings.Contains(body, "finished_with_gaps<") || strings.Contains(body, ">finished_with_gaps") {
			t.Errorf("run page shows the stored status name instead of words")
		}
	})
}
