package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestMatchingRowsAsEveryRowRead: a search decodes a row's fields only when
// its stored JSON may contain the needle. It must find exactly the rows a
// search decoding every row finds (SampleContains over the shown fields
// and the id): texts a JSON writer escapes (quotes, backslashes, line
// ends, <, >, & and U+2028 as the product's writers escape them for
// HTML), letters whose lower case is another script's or ASCII (É, İ,
// the Kelvin sign), a column the rubric does not show, stored by the
// import's writer and by encoding/json (a row edited).
func TestMatchingRowsAsEveryRowRead(t *testing.T) {
	texts := []string{
		"Tom & Jerry <b>bold</b>",
		`She said "hi" twice`,
		`a back\slash`,
		"line one\nLINE TWO\ttab",
		"Élan vital, ÉTÉ",
		"emoji 😀 smile",
		"split\u2028here",
		"ΣΊΣΥΦΟΣ",
		"İstanbul",
		"Straße",
		"\u212A is a kelvin",
		"plain words only",
	}
	needles := []string{"&", "<b>", "jerry <", `"hi"`, `\`, "\n", "line two", "\ttab", "élan", "été", "😀", "\u2028",
		"σίσυφος", "i̇stanbul", "istanbul", "ß", "k", "kelvin", "k is", "K IS A", "tom", "hidden", "@row-1", "ROW-1", "words", "zzz", ""}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, p := streamProject(t, db)
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "Search", Columns: []string{"text", "note"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		var rows []models.DatasetRow
		for i, s := range texts {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("@row-%d", i+1),
				Data: map[string]string{"text": s, "note": "hidden note"}, Ratings: map[string]*float64{}})
		}
		must(t, db.CreateDataset(ctx, &ds, rows))
		stored, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		must(t, err)
		// Half the rows written again through encoding/json, as an edit is.
		for i := range stored {
			if i%2 == 1 {
				must(t, db.Gorm.Model(&stored[i]).Select("Data").Updates(&stored[i]).Error)
			}
		}
		rep := &Report{Run: models.Run{DatasetID: ds.ID}, Dataset: ds}
		for _, needle := range needles {
			var want []int64
			for _, r := range stored {
				if SampleContains(SampleResult{ExternalID: r.ExternalID, Fields: r.Sample(ds.Fields).Fields}, strings.ToLower(needle)) {
					want = append(want, r.ID)
				}
			}
			got, err := MatchingRows(ctx, db, rep, needle)
			must(t, err)
			if !slices.Equal(got, want) {
				t.Errorf("search %q: rows %v, reading every row finds %v", needle, got, want)
			}
		}
	})
}
