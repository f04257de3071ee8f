package dataimport

import (
	"errors"
	"strings"
	"testing"
)

// TestSummaryRowIsRefused: a spreadsheet's "Total" line below the samples
// (every text empty, an average as its rating) was imported as a sample,
// said only among the import's notes. The mapping now refuses it, naming
// its line and what to do; a sample with an empty text and an ordinary id,
// or a "Total" whose texts are filled, is imported as before.
func TestSummaryRowIsRefused(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		input  string
		m      Mapping
		want   string // "" when the rows apply
	}{
		{"Total after blank lines", CSV, "id,question,answer,rating\ns1,Q one?,A one.,4\ns2,Q two?,A two.,3\n\n\nTotal,,,3.5\n",
			Mapping{IDColumn: "id", Fields: fields("question", "answer"), RatingColumns: []string{"rating"}},
			`line 6, column “id”: the row “Total” has every field shown to the judge empty: it looks like a summary of the rows above, not a sample; delete this row from the file and upload it again, or fill in its texts if it is a sample`},
		{"mean with a colon, spaces, no rating", CSV, "id,question,answer\ns1,q,a\n  Mean: ,,\n",
			Mapping{IDColumn: "id", Fields: fields("question", "answer")}, `line 3, column “id”: the row “Mean:”`},
		{"no id column: the first filled cell", CSV, "label,question,answer,rating\n,q,a,4\nGrand  Total,,,4\n",
			Mapping{Fields: fields("question", "answer"), RatingColumns: []string{"rating"}}, `line 3, column “label”: the row “Grand  Total”`},
		{"JSON item", JSON, `[{"id": "a", "question": "q"}, {"id": "Average", "question": ""}]`,
			Mapping{IDColumn: "id", Fields: fields("question")}, `item 2, column “id”: the row “Average”`},
		{"an ordinary id with empty texts is a sample", CSV, "id,question,answer,rating\ns1,q,a,4\ns2,,,3\n",
			Mapping{IDColumn: "id", Fields: fields("question", "answer"), RatingColumns: []string{"rating"}}, ""},
		{"a Total with a text is a sample", CSV, "id,question,answer\ns1,q,a\nTotal,How much in total?,\n",
			Mapping{IDColumn: "id", Fields: fields("question", "answer")}, ""},
		{"a word holding total is a sample", CSV, "id,question,answer\ns1,q,a\ntotally,,\n",
			Mapping{IDColumn: "id", Fields: fields("question", "answer")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := mustParse(t, tc.format, tc.input)
			rows, err := table.Apply(tc.m)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(rows) != len(table.Records) {
					t.Errorf("%d rows, want %d", len(rows), len(table.Records))
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("want one problem, got %v (%d rows)", err, len(rows))
			}
			if got := ve.Problems[0].Error(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("problem\n  %q\nwant it to start\n  %q", got, tc.want)
			}
		})
	}
}
