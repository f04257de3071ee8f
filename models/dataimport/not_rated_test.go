package dataimport

import (
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// A rating column where unrated rows say so in words, as spreadsheets
// write it ("N/A", "NA", Excel's "#N/A", a dash), was not suggested as a
// rating, and ticked by hand it stopped the import: `the rating "N/A" is
// not a number`. Those cells are now read as not rated, like empty ones:
// the column is suggested, the rows import without a rating, and the
// import's notes name them.
func TestNotApplicableRatings(t *testing.T) {
	for _, na := range []string{"N/A", "n/a", "NA", "#N/A", "-", "—", " N/A "} {
		t.Run(na, func(t *testing.T) {
			file := "id,answer,rating\ns1,Yes,4\ns2,No," + na + "\ns3,Maybe,3\n"
			table, err := Parse(strings.NewReader(file), CSV, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m := SuggestMapping(table); !slices.Equal(m.RatingColumns, []string{"rating"}) {
				t.Errorf("suggested ratings %q, want [rating]", m.RatingColumns)
			}
			rows, empties, err := table.ApplyNoting(Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "answer", Label: "Answer"}}, RatingColumns: []string{"rating"}})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if rows[1].Ratings["rating"] != nil || rows[0].Ratings["rating"] == nil || *rows[2].Ratings["rating"] != 3 {
				t.Errorf("ratings %v %v %v, want 4, not rated, 3", rows[0].Ratings["rating"], rows[1].Ratings["rating"], rows[2].Ratings["rating"])
			}
			if len(empties) != 1 || !empties[0].Rating || empties[0].Rows != 1 || empties[0].First[0].Line != 3 {
				t.Errorf("notes %+v, want one unrated row on line 3", empties)
			}
		})
	}
	// A word that is not one of those is still refused, naming the row.
	table, err := Parse(strings.NewReader("id,answer,rating\ns1,Yes,4\ns2,No,none yet\n"), CSV, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = table.Apply(Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "answer", Label: "Answer"}}, RatingColumns: []string{"rating"}})
	if err == nil || !strings.Contains(err.Error(), `line 3, column “rating”: the rating “none yet” is not a number`) {
		t.Errorf("Apply: %v, want the row refused", err)
	}
}
