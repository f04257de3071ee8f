package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestDatasetExportOnlyOnTheRubricsScale: the dataset's CSV export writes,
// per reviewer and criterion, the reviewer's current rating on the rubric's
// scale of the criterion (1 to 3 for the demo's Coherent, as the dataset's
// newest run asks for it), as a report reads them: a later rating given on
// LLM-Eval's 0 to 5 does not take the place of a 1-to-3 one, a reviewer
// who rated only on 0 to 5 gets no column, and a withdrawn rating is not
// written. On the old code the first cell held the 5, Bob had a column and
// Cara's withdrawn 3 was still exported.
func TestDatasetExportOnlyOnTheRubricsScale(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		if crit.Lo != 1 || crit.Hi != 3 {
			t.Fatalf("Coherent is on %g to %g, want 1 to 3", crit.Lo, crit.Hi)
		}
		rate := func(who string, row int, score *float64, lo, hi float64) {
			t.Helper()
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[row].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, RunID: &run.ID, Score: score, Lo: lo, Hi: hi,
				Comment: "c"})
			must(t, err)
		}
		v := func(x float64) *float64 { return &x }
		rate("Ann", 0, v(2), 1, 3)
		rate("Ann", 0, v(5), 0, 5) // later, on LLM-Eval's scale: counts nowhere
		rate("Bob", 1, v(5), 0, 5)
		rate("Cara", 2, v(3), 1, 3)
		rate("Cara", 2, nil, 1, 3) // withdrawn
		rate("Cara", 3, v(1), 1, 3)

		rec := env.get(fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
		}
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("export: %d records, %v", len(recs), err)
		}
		header := recs[0]
		col := func(name string) int { return slices.Index(header, name) }
		if i := col("coherent@browser:Bob"); i >= 0 {
			t.Errorf("Bob rated only on 0 to 5 and has a column: %q", header)
		}
		want := []struct {
			column string
			row    int
			cell   string
		}{
			{"coherent@browser:Ann", 0, "2"},
			{"coherent@browser:Cara", 2, ""},
			{"coherent@browser:Cara", 3, "1"},
		}
		for _, w := range want {
			i := col(w.column)
			if i < 0 {
				t.Errorf("no column %q in %q", w.column, header)
				continue
			}
			if got := recs[w.row+1][i]; got != w.cell {
				t.Errorf("%s, sample %d: %q, want %q", w.column, w.row, got, w.cell)
			}
		}
	})
}
