package handlers

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestRunProgressBlockSaysWhatIsTrue: criteria are judged side by side, and
// each pass writes its own criterion and round into the run as it starts a
// round, so the stored "current" criterion is whichever pass wrote last. A
// finished run says nothing about a current criterion or round; a running
// run of several criteria judged side by side says so and shows no single
// round; a run of one pass (one criterion, or LLM-Eval's every criterion
// in one call) still shows its round live.
func TestRunProgressBlockSaysWhatIsTrue(t *testing.T) {
	crits := func(n int) evaluator.Rubric {
		r := evaluator.Rubric{Task: "t"}
		for i := range n {
			r.Criteria = append(r.Criteria, evaluator.Criterion{Name: "c" + strconv.Itoa(i), Lo: 1, Hi: 5})
		}
		return r
	}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	finished := started.Add(time.Minute)
	tests := []struct {
		name     string
		status   string
		method   string
		criteria int
		want     []string // in the block
		wantNot  []string
	}{
		{"finished, three criteria side by side", models.RunSucceeded, models.MethodBatchEval, 3,
			nil, []string{"Criterion 2 of 3", `data-field="criterion"`, `data-field="round"`, "Round 2 of 3", "side by side"}},
		{"finished with gaps, one criterion", models.RunFinishedWithGaps, models.MethodBatchEval, 1,
			nil, []string{"Criterion", `data-field="round"`}},
		{"running, three criteria side by side", models.RunRunning, models.MethodBatchEval, 3,
			[]string{`data-testid="progress-criteria"`, "3 criteria judged side by side", "3 rounds per criterion"},
			[]string{"Criterion 2 of 3", `data-field="criterion"`, `data-field="round"`}},
		{"running, one criterion", models.RunRunning, models.MethodBatchEval, 1,
			[]string{`Round <span data-field="round">2</span> of 3`}, []string{"Criterion 2 of", "side by side"}},
		{"running, LLM-Eval judges every criterion in one call", models.RunRunning, models.MethodLLMEval, 3,
			[]string{"3 criteria in each call"}, []string{"Criterion 2 of 3", "side by side"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := models.Run{ID: 7, Status: tt.status, Method: tt.method, RubricSnapshot: crits(tt.criteria),
				Settings: evaluator.Settings{Rounds: 3}, BatchesDone: 5, BatchesTotal: 9, StartedAt: &started,
				// As the last pass to start a round leaves them.
				CurrentCriterion: 1, CurrentRound: 1}
			if tt.method == models.MethodLLMEval {
				run.Settings.Rounds = 1
				run.CurrentRound = 0
			}
			if tt.status != models.RunRunning {
				run.FinishedAt = &finished
			}
			p := runProgress(run, 0, finished)
			var buf bytes.Buffer
			if err := web.RunProgressBlock(run.ID, p, tt.status == models.RunRunning, false, false).Render(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("the progress block lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("the progress block says %q:\n%s", w, got)
				}
			}
		})
	}
}
