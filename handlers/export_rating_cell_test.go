package handlers

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDatasetExportWritesPaddedRatingsAsNumbers: a rating imported with
// blanks around it (" 4", "3.5 ", a no-break space before -2) is written
// by the dataset's CSV export as the number, not as the quoted text " 4"
// a spreadsheet keeps as text (report.RatingCell, whose own test checks that
// a rating cell that is no number is still defused). QA: the export wrote
// `" 4"`.
func TestDatasetExportWritesPaddedRatingsAsNumbers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cells := []struct{ name, in, want string }{
			{"leading space", " 4", "4"},
			{"trailing space", "3.5 ", "3.5"},
			{"both sides, tab", "\t2\t", "2"},
			{"no-break space, negative", "\u00a0-2", "-2"},
			{"plain", "5", "5"},
		}
		var b strings.Builder
		for i, c := range cells {
			fmt.Fprintf(&b, `{"id": "r%d", "text": "t%d", "score": %q}`+"\n", i, i, c.in)
		}
		token := env.uploadToken("padded.jsonl", b.String())
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Padded"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import: %d %s", rec.Code, rec.Body)
		}
		rec = env.get(strings.TrimSuffix(rec.Header().Get("Location"), "/") + "/export.csv")
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d %s", rec.Code, rec.Body)
		}
		body := rec.Body.String()
		recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil || len(recs) != len(cells)+1 {
			t.Fatalf("export: %d records, %v:\n%s", len(recs), err, body)
		}
		if recs[0][2] != "score" {
			t.Fatalf("export header = %q, want score third", recs[0])
		}
		for i, c := range cells {
			t.Run(c.name, func(t *testing.T) {
				if got := recs[i+1][2]; got != c.want {
					t.Errorf("exported rating %q = %q, want %q", c.in, got, c.want)
				}
			})
		}
		// A number is written bare, never quoted as text.
		if strings.Contains(body, `" 4"`) || strings.Contains(body, `"3.5 "`) {
			t.Errorf("a padded rating is still written as quoted text:\n%s", body)
		}
	})
}
