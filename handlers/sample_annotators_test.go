package handlers

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestSamplePageShowsEachAnnotatorsRating: the launch form and the
// variants page name the annotators' mean as a criterion's human ratings,
// and a reviewer read "Human rating
// 4.50" on the page of a sample two annotators rated 4 and 5, with no word
// of who gave what. The sample page now lists each annotator column's
// rating of the sample, as imported, and says "not rated" for an annotator
// who left it empty (never 0), escaping the column names.
func TestSamplePageShowsEachAnnotatorsRating(t *testing.T) {
	four, five, two := 4.0, 5.0, 2.0
	cols := []string{"ann <A>", "ann_B"}
	tests := []struct {
		id      string
		ratings map[string]*float64
		want    []string // annotator entries on the sample's page, in order
	}{
		{"s1", map[string]*float64{"ann <A>": &four, "ann_B": &five}, []string{"ann &lt;A&gt; <strong>4.00</strong>", "ann_B <strong>5.00</strong>"}},
		{"s2", map[string]*float64{"ann <A>": &two, "ann_B": nil}, []string{"ann &lt;A&gt; <strong>2.00</strong>", `ann_B <span class="muted">not rated</span>`}},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		var rows []models.DatasetRow
		for i, tt := range tests {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: tt.id,
				Data: map[string]string{"id": tt.id, "text": "reply " + tt.id}, Ratings: tt.ratings})
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "two annotators", Format: "csv", IDColumn: "id",
			Columns: []string{"id", "text"}, Fields: []evaluator.Field{{Column: "text", Label: "Reply"}}, RatingColumns: cols}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 1, 2
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "annotators",
			Method: models.MethodBatchEval, Settings: s, JudgeSnapshot: d.judge.Snapshot(), Simulated: true,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the replies.", Criteria: []evaluator.Criterion{{Name: "Helpful", Description: "Does it help?",
				Lo: 1, Hi: 5, AnnotatorColumns: cols}}}}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)

		// The launch form and the run's variants page name the
		// annotators' mean as the criterion's human ratings: the form
		// said "(1 to 5)" alone, as if the criterion had none.
		const mean = "mean of ann &lt;A&gt;, ann_B"
		rb := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "annotators", Task: "Rate the replies.",
			Criteria: run.RubricSnapshot.Criteria}
		must(t, env.db.SaveRubric(ctx, &rb))
		form := env.get(fmt.Sprintf("/projects/%d/runs/new?rubric=%d&dataset=%d", env.project.ID, rb.ID, ds.ID))
		if form.Code != http.StatusOK {
			t.Fatalf("launch form: %d", form.Code)
		}
		if want := "(1 to 5; human ratings: " + mean + ")"; !strings.Contains(form.Body.String(), want) {
			t.Errorf("launch form does not say %q", want)
		}
		variants := env.get(fmt.Sprintf("/runs/%d/variants", run.ID))
		if variants.Code != http.StatusOK {
			t.Fatalf("variants: %d", variants.Code)
		}
		if want := "Range 1 to 5; human ratings in " + mean + " (fixed)."; !strings.Contains(variants.Body.String(), want) {
			t.Errorf("variants page does not say %q", want)
		}
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 10)
		must(t, err)
		entry := regexp.MustCompile(`(?s)<span data-testid="sample-annotator">(.*?)</span>\s*(?:·|</p>)`)
		for i, tt := range tests {
			rec := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, stored[i].ID))
			if rec.Code != http.StatusOK {
				t.Fatalf("sample %s: %d", tt.id, rec.Code)
			}
			body := rec.Body.String()
			if !strings.Contains(body, "Each annotator&#39;s rating, as imported:") && !strings.Contains(body, "Each annotator's rating, as imported:") {
				t.Errorf("sample %s: the page does not list the annotators' ratings", tt.id)
			}
			var got []string
			for _, m := range entry.FindAllStringSubmatch(body, -1) {
				got = append(got, strings.Join(strings.Fields(m[1]), " "))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("sample %s: annotators %q, want %q", tt.id, got, tt.want)
			}
		}
	})
}
