package handlers

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestProducedByNamesOnlyHumanColumnsUsed: FED dialogues uploaded without
// their "scores" field, judged with a rubric whose criteria name the
// human columns scores.Coherent and scores.Overall. The run page says the
// dataset lacks those columns; its "Produced by" and the CSV export must
// not claim them as the human ratings the figures used.
func TestProducedByNamesOnlyHumanColumnsUsed(t *testing.T) {
	f, err := os.Open(fedDialogPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", fedDialogPath)
	}
	must(t, err)
	type fedRow struct {
		ID      string `json:"id"`
		System  string `json:"system"`
		Context string `json:"context"`
	}
	var fed []fedRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() && len(fed) < 20 {
		var r fedRow // the scores field left out, as the upload had it
		must(t, json.Unmarshal(sc.Bytes(), &r))
		fed = append(fed, r)
	}
	must(t, sc.Err())
	f.Close()

	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, len(fed))
		for i, r := range fed {
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "system": r.System, "context": r.Context},
				Ratings: map[string]*float64{}}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED without scores", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "system", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: []string{}}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		run := env.startRun(ds, "FED", models.MethodBatchEval, func(r *models.Run) {
			r.RubricID, r.RubricVersion = nil, nil
			r.RubricSnapshot = evaluator.Rubric{Task: "Rate the dialogues.", Criteria: []evaluator.Criterion{
				{Name: "Coherent", Lo: 1, Hi: 3, HumanColumn: "scores.Coherent"},
				{Name: "Overall", Lo: 1, Hi: 5, HumanColumn: "scores.Overall"}}}
		})
		if got := env.waitRun(run.ID, 90*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", got.Status, got.Error)
		}
		page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		if !strings.Contains(page, "does not have as a rating column") {
			t.Fatalf("the run page does not say the dataset lacks the rubric's columns")
		}
		human := testidText(t, page, "provenance-human")
		want := "Coherent=none (the rubric names scores.Coherent, from which no rating was read); Overall=none (the rubric names scores.Overall, from which no rating was read)"
		if human != want {
			t.Errorf("Produced by, human ratings = %q, want %q", human, want)
		}
		lines, err := csv.NewReader(strings.NewReader(env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())).ReadAll()
		must(t, err)
		col := slices.Index(lines[0], "human rating columns")
		if col < 0 || len(lines) < 2 || lines[1][col] != want {
			t.Errorf("CSV human rating columns = %v, want %q", lines[1:2], want)
		}
	})
}

// testidText is the unescaped text of the element marked data-testid=id.
func testidText(t *testing.T, page, id string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `data-testid="`+id+`">`)
	if !ok {
		t.Fatalf("the page has no %s", id)
	}
	text, _, _ := strings.Cut(rest, "<")
	return html.UnescapeString(text)
}
