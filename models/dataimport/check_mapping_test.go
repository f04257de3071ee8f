package dataimport

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestCheckMappingNamesTheChoice: each problem of the mapping's choices
// says which choice it is about (ParseError.Choice) and its column, so a
// form can show it beside that choice; choices that agree have none, and
// the file's own problems (a row's id) name no choice.
func TestCheckMappingNamesTheChoice(t *testing.T) {
	columns := []string{"id", "text", "score", "note"}
	type want struct{ choice, column string }
	tests := []struct {
		name string
		m    Mapping
		want []want
	}{
		{"choices agree", Mapping{IDColumn: "id", Fields: fields("text"), RatingColumns: []string{"score"}}, nil},
		{"nothing shown", Mapping{IDColumn: "id", RatingColumns: []string{"score"}}, []want{{ChoiceField, ""}}},
		{"shown and rated", Mapping{Fields: fields("text", "score"), RatingColumns: []string{"score"}}, []want{{ChoiceRating, "score"}}},
		{"rated twice", Mapping{Fields: fields("text"), RatingColumns: []string{"score", "score"}}, []want{{ChoiceRating, "score"}}},
		{"shown twice", Mapping{Fields: fields("text", "text")}, []want{{ChoiceField, "text"}}},
		{"two labels alike", Mapping{Fields: []evaluator.Field{{Column: "text", Label: "Reply"}, {Column: "note", Label: " reply"}}}, []want{{ChoiceLabel, "note"}}},
		{"label on two lines", Mapping{Fields: []evaluator.Field{{Column: "text", Label: "Re\nply"}}}, []want{{ChoiceLabel, "text"}}},
		{"missing id", Mapping{IDColumn: "nope", Fields: fields("text")}, []want{{ChoiceID, "nope"}}},
		{"missing annotator", Mapping{AnnotatorColumn: "who", Fields: fields("text")}, []want{{ChoiceAnnotator, "who"}}},
		{"missing field and rating", Mapping{Fields: fields("gone"), RatingColumns: []string{"lost"}}, []want{{ChoiceField, "gone"}, {ChoiceRating, "lost"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckMapping(columns, CSV, tt.m)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %+v, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if got[i].Choice != w.choice || got[i].Column != w.column || got[i].Msg == "" {
					t.Errorf("problem %d = %+v, want choice %q column %q", i, got[i], w.choice, w.column)
				}
			}
		})
	}

	// A row's own problem names no choice.
	_, err := mustParse(t, CSV, "id,text\na,x\na,y\n").Apply(Mapping{IDColumn: "id", Fields: fields("text")})
	ve, ok := err.(*ValidationError)
	if !ok || len(ve.Problems) != 1 || ve.Problems[0].Choice != "" || ve.Problems[0].Line != 3 {
		t.Errorf("a repeated id: %v, want one problem on line 3 naming no choice", err)
	}
}
