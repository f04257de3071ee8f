package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A spreadsheet's "Total" line below the samples, after blank lines, was
// imported as a sample with empty texts, said only in the import's notes.
// Mapping the file now stops at that line, naming it and both ways on,
// and no data set is stored.
func TestSummaryRowStopsTheImport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const total = "id,question,answer,rating\ns1,Q one?,A one.,4\ns2,Q two?,A two.,3\n\n\nTotal,,,3.5\n"
		before := env.countDatasets()
		token := env.uploadToken("total.csv", total)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Totals"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
		if rec.Code == http.StatusSeeOther {
			t.Fatalf("the file was imported (to %s) with its Total row", rec.Header().Get("Location"))
		}
		body := rec.Body.String()
		for _, want := range []string{"line 6", "the row “Total” has every field shown to the judge empty", "delete this row from the file"} {
			if !strings.Contains(body, want) {
				t.Errorf("the refusal lacks %q", want)
			}
		}
		if got := env.countDatasets(); got != before {
			t.Errorf("%d data sets after the refusal, want %d", got, before)
		}
	})
}
