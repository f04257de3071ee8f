package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestImportRatingsOutOfAMaximum: ratings typed as "4/5" are imported
// through the browser as their scores (4), stored as numbers with a note
// saying how they were read, a missing one missing (never 0); a file that
// mixes maximums is refused naming the line, the column and what to write,
// and nothing is stored. Before, every such cell was "not a number".
func TestImportRatingsOutOfAMaximum(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		importFile := func(content string) (*httptestRecorder, int) {
			token := env.uploadToken("rated.csv", content)
			before := env.countDatasets()
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Rated"}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Answer"}, "rating_2": {"1"}})
			return rec, env.countDatasets() - before
		}
		rec, added := importFile("id,answer,quality\ns1,Paris is the capital.,4/5\ns2,Eight legs.,\ns3,Shakespeare wrote it.,2 out of 5\ns4,It is 4.,3.5 / 5\n")
		if rec.Code != http.StatusSeeOther || added != 1 {
			t.Fatalf("import = %d (%d datasets added): %.1500s", rec.Code, added, rec.Body)
		}
		ds := env.lastDataset()
		rows, err := env.db.ListDatasetRows(t.Context(), ds.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []any{4.0, nil, 2.0, 3.5}
		for i, r := range rows {
			got := r.Ratings["quality"]
			switch w := want[i].(type) {
			case nil:
				if got != nil {
					t.Errorf("row %d: rating %v, want missing", i+1, *got)
				}
			case float64:
				if got == nil || *got != w {
					t.Errorf("row %d: rating %v, want %v", i+1, got, w)
				}
			}
		}
		if notes := strings.Join(ds.ImportNotes, "\n"); !strings.Contains(notes, `3 ratings of column “quality” are written out of 5 (such as “4/5” on line 2)`) {
			t.Errorf("import notes %q lack how the ratings were read", ds.ImportNotes)
		}
		rec, added = importFile("id,answer,quality\ns1,Paris is the capital.,4/5\ns2,Eight legs.,7/10\n")
		if rec.Code != http.StatusUnprocessableEntity || added != 0 {
			t.Fatalf("mixed maximums = %d (%d datasets added), want 422 and none", rec.Code, added)
		}
		body := rec.Body.String()
		for _, w := range []string{"line 3", "quality", "is out of 10, but this column&#39;s ratings are out of 5", "write every rating of the column out of one maximum"} {
			if !strings.Contains(body, w) {
				t.Errorf("the refusal lacks %q: %.3000s", w, body)
			}
		}
	})
}
