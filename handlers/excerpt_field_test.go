package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestSampleTablesExcerptTheLastNonEmptyField: the run and compare tables
// showed each sample's last mapped field as its excerpt, which was empty
// when that field was (here a "note" column left blank, mapped after the
// response). They now show the last field, in the rubric's order, that is
// not empty: here the response, not the conversation before it.
func TestSampleTablesExcerptTheLastNonEmptyField(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		demo := env.demo().dataset
		rows, err := env.db.ListDatasetRows(ctx, demo.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		copies := make([]models.DatasetRow, len(rows))
		for i, r := range rows {
			data := map[string]string{"note": " "}
			for k, v := range r.Data {
				data[k] = v
			}
			copies[i] = models.DatasetRow{Position: r.Position, ExternalID: r.ExternalID, Data: data, Ratings: r.Ratings}
		}
		fields := []evaluator.Field{{Column: "context", Label: "Conversation history"}, {Column: "response", Label: "Response"}, {Column: "note", Label: "Note"}}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Blank notes after the responses", SourceFilename: "notes.jsonl",
			Format: demo.Format, IDColumn: demo.IDColumn, Columns: append(append([]string{}, demo.Columns...), "note"), Fields: fields, RatingColumns: demo.RatingColumns}
		if err := env.db.CreateDataset(ctx, &ds, copies); err != nil {
			t.Fatal(err)
		}
		mapped := func(r *models.Run) { r.RubricSnapshot.Fields = fields }
		a := env.startRun(ds, "Notes A", models.MethodBatchEval, mapped)
		b := env.startRun(ds, "Notes B", models.MethodGEval, mapped)
		for _, r := range []models.Run{a, b} {
			if got := env.waitRun(r.ID, 60*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("run %s (%s), want succeeded", got.Status, got.Error)
			}
		}
		first := rows[0].Data["response"]
		if strings.TrimSpace(first) == "" {
			t.Fatal("the demo's first response is empty: the test shows nothing")
		}
		want := `<td class="small">` + templ.EscapeString(web.RunExcerpt(first, 110)) + `</td>`
		for _, path := range []string{fmt.Sprintf("/runs/%d", a.ID), fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)} {
			body := env.get(path).Body.String()
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks the first sample's response as its excerpt, %q", path, want)
			}
			if strings.Contains(body, `<td class="small"></td>`) {
				t.Errorf("%s has an empty excerpt", path)
			}
		}
	})
}
