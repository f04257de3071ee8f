package handlers

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRunListAgreementRecomputed runs BatchEval with the simulated judge
// on the first 50 FED dialogues, three criteria: Coherent and Likeable with
// their human ratings (Likeable's left empty on five dialogues) and Depth
// without any. The run list's Agreement, "r = " to two decimals, must be
// the mean of the Pearson r of Coherent and Likeable, each recomputed from
// the stored round scores (a sample's final score is the mean of its
// readable rounds) and the FED file over the samples having both, with
// Depth, which has no human rating, left out.
func TestRunListAgreementRecomputed(t *testing.T) {
	const n = 50
	fed := readFED(t, n)
	unrated := func(i int) bool { return i%10 == 4 }
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			coherent, likeable := r.Scores["Coherent"], r.Scores["Likeable"]
			ratings := map[string]*float64{"Coherent": &coherent, "Likeable": &likeable}
			if unrated(i) {
				ratings["Likeable"] = nil
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context": r.Context}, Ratings: ratings}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED 50", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: []string{"Coherent", "Likeable"}}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 3, 10
		crits := []evaluator.Criterion{
			{Name: "Coherent", Description: "Is the dialogue coherent?", Lo: 1, Hi: 3, HumanColumn: "Coherent"},
			{Name: "Depth", Description: "Does it go in depth?", Lo: 1, Hi: 3},
			{Name: "Likeable", Description: "Is the system likeable?", Lo: 1, Hi: 3, HumanColumn: "Likeable"},
		}
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "FED agreement",
			Method: models.MethodBatchEval, Settings: s, RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: crits},
			JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}
		finals := map[int]map[string]float64{}
		for ci := range crits {
			finals[ci] = storedFinals(t, env, run.ID, ci)
		}
		var sum float64
		for _, ci := range []int{0, 2} {
			var xs, ys []float64
			for i, r := range fed {
				f, ok := finals[ci][r.ID]
				if !ok || (crits[ci].Name == "Likeable" && unrated(i)) {
					continue
				}
				xs, ys = append(xs, f), append(ys, r.Scores[crits[ci].Name])
			}
			r := textbookPearson(xs, ys)
			t.Logf("%s: r = %.4f over %d samples", crits[ci].Name, r, len(xs))
			sum += r
		}
		want := sum / 2
		list := env.get("/runs").Body.String()
		row := regexp.MustCompile(fmt.Sprintf(`(?s)href="/runs/%d".*?data-testid="run-agreement">([^<]*)<`, run.ID)).FindStringSubmatch(list)
		if row == nil || !strings.HasPrefix(row[1], "r = ") {
			t.Fatalf("the run list shows no agreement for run %d: %v", run.ID, row)
		}
		t.Logf("run list: %s; recomputed %.4f", row[1], want)
		shown(t, "the run list's agreement", strings.TrimPrefix(row[1], "r = "), want, 2)
		if math.IsNaN(want) {
			t.Fatal("recomputed no agreement")
		}
	})
}
