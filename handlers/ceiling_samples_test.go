package handlers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestCeilingCountsItsSamplesSideBySide: the human ceiling compares the
// judge's correlation, over every sample with a judge score and a human
// rating, with the humans' agreement, over the samples rated twice. The
// run page and the shared page showed the second count only; they show
// both, side by side, with a sentence saying the samples differ, and the
// JSON export gives both counts.
func TestCeilingCountsItsSamplesSideBySide(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const n, twice = 12, 5
		rows := make([]models.DatasetRow, n)
		for i := range rows {
			h := float64(1 + i%5)
			ratings := map[string]*float64{"q": &h}
			if i < twice {
				a, b := h, min(5, h+float64(i%2))
				ratings["q@a1"], ratings["q@a2"] = &a, &b
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%02d", i),
				Data: map[string]string{"id": fmt.Sprintf("s%02d", i), "text": "sample"}, Ratings: ratings}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Rated twice, in part", Format: "csv", IDColumn: "id",
			Columns: []string{"id", "text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
		if err := env.db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		d := ratedData{ds: ds}
		for _, r := range stored {
			d.rowIDs = append(d.rowIDs, r.ID)
			d.human = append(d.human, *r.Ratings["q"])
		}
		run := env.storedRun(d, "Ceiling", noisy(d.human, 0.5, 7), nil)

		check := func(where, body string) {
			t.Helper()
			get := func(id string) string {
				m := regexp.MustCompile(`data-testid="` + id + `">([^<]*)<`).FindStringSubmatch(body)
				if m == nil {
					return ""
				}
				return m[1]
			}
			if got := get("ceiling-items"); got != fmt.Sprint(twice) {
				t.Errorf("%s: the humans' figure is over %q samples, want %d", where, got, twice)
			}
			if got := get("ceiling-judged"); got != fmt.Sprint(n) {
				t.Errorf("%s: the judge's figure is over %q samples, want %d (shown beside the humans')", where, got, n)
			}
			want := fmt.Sprintf("over different samples: the humans&#39; agreement over the %d samples rated by two or more annotators, the judge&#39;s correlation over the %d samples", twice, n)
			if got := get("ceiling-samples"); !strings.Contains(got, want) || !strings.Contains(got, fmt.Sprintf("(%d of them in both)", twice)) {
				t.Errorf("%s: the sentence on the samples is %q, want it to say %q and how many of them are in both", where, got, want)
			}
			// The note under the table names the figure it explains by its
			// row: the table's second row is the judge's correlation, which
			// "The second figure" (written before the table) seemed to mean.
			if strings.Contains(body, "The second figure") || !strings.Contains(body, "“One human against the others” correlates each annotator with the average of the other annotators") {
				t.Errorf("%s: the note under the ceiling's table does not name the row it explains", where)
			}
		}
		check("run page", env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String())
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		if err != nil {
			t.Fatal(err)
		}
		check("shared page", env.get("/s/"+token).Body.String())

		export := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.String()
		want := fmt.Sprintf(`"items": %d,
          "judge_samples": %d,
          "samples_in_both": %d,`, twice, n, twice)
		if !strings.Contains(export, want) {
			i := strings.Index(export, `"human_ceiling"`)
			t.Errorf("JSON export: human_ceiling lacks\n%s\n%.300s", want, export[max(0, i):])
		}
	})
}
