package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRunPageGroupingChoices: the run page offered the dataset's id column
// and its human rating columns under "Group samples by" and "Systems are in
// column"; each id is a group of one sample and a rating column groups the
// samples by the humans' own rating, so choosing either gave "undefined"
// everywhere. They are offered no more, unless the address chose one.
func TestRunPageGroupingChoices(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string // options of both selects after "no grouping"/"none"
	}{
		{"fresh page", "", []string{"context", "system"}},
		{"a rating column chosen by the address stays offered", "?group=overall", []string{"context", "system", "overall"}},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		five, two := 5.0, 2.0
		var rows []models.DatasetRow
		for i := range 4 {
			id := fmt.Sprintf("d%d", i)
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: id,
				Data:    map[string]string{"id": id, "context": "reply number " + id, "system": []string{"A", "B"}[i%2]},
				Ratings: map[string]*float64{"overall": []*float64{&five, &two}[i%2]}})
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "grouping", Format: "csv", IDColumn: "id",
			Columns: []string{"id", "context", "system", "overall"}, Fields: []evaluator.Field{{Column: "context", Label: "Reply"}},
			RatingColumns: []string{"overall"}}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 1, 4
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "grouping",
			Method: models.MethodBatchEval, Settings: s, JudgeSnapshot: d.judge.Snapshot(), Simulated: true,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the replies.", Criteria: []evaluator.Criterion{{Name: "Overall", Description: "Good?",
				Lo: 1, Hi: 5, HumanColumn: "overall"}}}}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)
		option := regexp.MustCompile(`<option value="([^"]*)"`)
		for _, tt := range tests {
			rec := env.get(fmt.Sprintf("/runs/%d%s", run.ID, tt.query))
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: run page %d", tt.name, rec.Code)
			}
			body := rec.Body.String()
			for _, sel := range []string{"group-0", "system-0"} {
				var got []string
				for _, m := range option.FindAllStringSubmatch(selectHTML(t, body, sel), -1) {
					got = append(got, m[1])
				}
				if len(got) == 0 {
					t.Fatalf("%s: select %s has no options", tt.name, sel)
				}
				got = got[1:] // "no grouping" / "none"
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s: %s offers %q, want %q", tt.name, sel, got, tt.want)
				}
			}
		}
	})
}
