package dataimport

import (
	"reflect"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestEmptyFieldsAreNoted: a row whose field shown to the judge is empty
// was imported without a word. The rows are still imported, and the
// applier says, per shown field, how many rows are empty and which first
// (their record and line), whether the file is read whole or streamed.
func TestEmptyFieldsAreNoted(t *testing.T) {
	shown := []evaluator.Field{{Column: "question", Label: "Question"}, {Column: "answer", Label: "Answer"}}
	tests := []struct {
		name   string
		format Format
		input  string
		m      Mapping
		want   []EmptyField
	}{
		{"none empty", CSV, "id,question,answer,note\na,q1,r1,\nb,q2,r2,\n",
			Mapping{IDColumn: "id", Fields: shown}, nil},
		{"empty and blank answers, a multi-line cell before", CSV,
			"id,question,answer\na,\"q1\nmore\",r1\nb,q2,\nc,q3,  \nd,q4,r4\n",
			Mapping{IDColumn: "id", Fields: shown},
			[]EmptyField{{Column: "answer", Label: "Answer", Rows: 2, First: []Place{{Record: 2, Line: 4}, {Record: 3, Line: 5}}}}},
		{"a column not shown is not counted", CSV, "id,question,answer\na,q1,\nb,q2,\n",
			Mapping{IDColumn: "id", Fields: shown[:1]}, nil},
		{"more than are named", CSV, "q,a\n" + strings.Repeat("x,\nx,y\n", 7),
			Mapping{Fields: []evaluator.Field{{Column: "q", Label: "Q"}, {Column: "a", Label: "A"}}},
			[]EmptyField{{Column: "a", Label: "A", Rows: 7, First: []Place{{1, 2, false}, {3, 4, false}, {5, 6, false}, {7, 8, false}, {9, 10, false}}}}},
		{"an empty human rating, after the empty fields", CSV, "id,question,answer,q,r\na,q1,,4,\nb,q2,r2,,\nc,q3,r3,2,1\n",
			Mapping{IDColumn: "id", Fields: shown, RatingColumns: []string{"q", "r"}},
			[]EmptyField{{Column: "answer", Label: "Answer", Rows: 1, First: []Place{{1, 2, false}}},
				{Column: "q", Label: "q", Rows: 1, First: []Place{{2, 3, false}}, Rating: true},
				{Column: "r", Label: "r", Rows: 2, First: []Place{{1, 2, false}, {2, 3, false}}, Rating: true}}},
		{"JSON items, a key missing", JSON, `[{"question": "q1", "answer": "r1"}, {"question": "", "answer": "r2"}, {"answer": "r3"}]`,
			Mapping{Fields: shown},
			[]EmptyField{{Column: "question", Label: "Question", Rows: 2, First: []Place{{2, 2, true}, {3, 3, true}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := mustParse(t, tc.format, tc.input)
			rows, got, err := table.ApplyNoting(tc.m)
			if err != nil {
				t.Fatalf("the rows were refused: %v", err)
			}
			if len(rows) != len(table.Records) {
				t.Errorf("%d rows imported, want all %d", len(rows), len(table.Records))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("empty fields (read whole) = %+v\nwant %+v", got, tc.want)
			}
			// The streamed import's applier says the same.
			a := NewApplier(table.Columns, tc.format, tc.m, func(fn func(Record) error) error {
				for _, r := range table.Records {
					if err := fn(r); err != nil {
						return err
					}
				}
				return nil
			})
			for _, r := range table.Records {
				a.Add(r)
			}
			if err := a.Finish(); err != nil {
				t.Fatal(err)
			}
			if got := a.EmptyFields(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("empty fields (streamed) = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestEmptyRatingsOfAnnotatorRowsAreNotNoted: in a file with one row per
// annotator, an empty rating is an annotator who did not rate that
// criterion, not a sample without a rating: nothing is noted.
func TestEmptyRatingsOfAnnotatorRowsAreNotNoted(t *testing.T) {
	table := mustParse(t, CSV, "id,text,who,q\na,t1,ann1,3\na,t1,ann2,\nb,t2,ann1,2\n")
	_, got, err := table.ApplyNoting(Mapping{IDColumn: "id", AnnotatorColumn: "who",
		Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("empty fields = %+v, want none", got)
	}
}
