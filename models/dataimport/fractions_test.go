package dataimport

import (
	"errors"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestRatingsOutOfAMaximum: a human rating written as a score out of a
// maximum ("4/5", "4 / 5", "4 out of 5", "3.5/5") is read as its score
// when its column's ratings share that maximum (plain numbers up to it
// allowed), and refused, naming line and column and what to write, when
// they do not: a wrong number is never stored. Missing stays missing.
// Fails before: every such cell was "not a number".
func TestRatingsOutOfAMaximum(t *testing.T) {
	tests := []struct {
		name    string
		sep     string
		ratings []string // one per row, lines 2...
		want    []any    // float64 read, nil missing, or a string: a problem's fragment on that row
		note    string   // a fragment of the import note
	}{
		{"slash", ",", []string{"4/5", "5/5", "1/5"}, []any{4.0, 5.0, 1.0}, `3 ratings of column “rating” are written out of 5 (such as “4/5” on line 2)`},
		{"spaces and words", ",", []string{"4 / 5", "2 out of 5", "3 Out Of 5"}, []any{4.0, 2.0, 3.0}, "out of 5"},
		{"decimal score", ",", []string{"3.5/5", "4/5"}, []any{3.5, 4.0}, "out of 5"},
		{"decimal comma", ";", []string{"3,5/5", "4/5"}, []any{3.5, 4.0}, "out of 5"},
		{"missing stays missing", ",", []string{"4/5", "", "N/A", "0/5", "2/5"}, []any{4.0, nil, nil, 0.0, 2.0}, "3 ratings"},
		{"plain numbers up to the maximum", ",", []string{"5", "4/5", "3"}, []any{5.0, 4.0, 3.0}, `1 rating of column “rating” is written out of 5`},
		{"two maximums", ",", []string{"4/5", "7/10"}, []any{4.0, `the rating “7/10” is out of 10, but this column's ratings are out of 5 (“4/5” on line 2)`}, ""},
		{"inexact conversion is about", ",", []string{"4/5", "1/3"}, []any{4.0, "(1 out of 3 is about 1.67 out of 5)"}, ""},
		{"score above its maximum", ",", []string{"6/5"}, []any{`the rating “6/5” is more than its own maximum (5)`}, ""},
		{"plain number above, after", ",", []string{"4/5", "8"}, []any{4.0, `the rating “8” is more than 5, the maximum this column's ratings are written out of (“4/5” on line 2)`}, ""},
		{"plain number above, before", ",", []string{"8", "4/5"}, []any{8.0, `the rating “4/5” is out of 5, but this column holds 8 (on line 2)`}, ""},
		{"no maximum", ",", []string{"4/0"}, []any{`the rating “4/0” is not a number`}, ""},
		{"negative", ",", []string{"-1/5"}, []any{`the rating “-1/5” is not a number`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("id" + tt.sep + "answer" + tt.sep + "rating\n")
			for i, r := range tt.ratings {
				b.WriteString("s" + string(rune('1'+i)) + tt.sep + "An answer" + tt.sep + "\"" + r + "\"\n")
			}
			table, err := Parse(strings.NewReader(b.String()), CSV, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			m := Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "answer", Label: "Answer"}}, RatingColumns: []string{"rating"}}
			rows, _, notes, err := table.ApplyWithNotes(m)
			var problems []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				for _, p := range ve.Problems {
					if p.Column != "rating" {
						t.Errorf("problem in column %q: %v", p.Column, p.Error())
					}
					problems = append(problems, p.Error())
				}
			} else if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			wantProblems := 0
			for i, w := range tt.want {
				switch w := w.(type) {
				case string:
					wantProblems++
					line := "line " + string(rune('2'+i)) + ", column “rating”: "
					found := false
					for _, p := range problems {
						found = found || (strings.HasPrefix(p, line) && strings.Contains(p, w))
					}
					if !found {
						t.Errorf("no problem %q%q among %q", line, w, problems)
					}
				case float64:
					if err == nil && (rows[i].Ratings["rating"] == nil || *rows[i].Ratings["rating"] != w) {
						t.Errorf("row %d rating = %v, want %v", i+1, fmtRating(rows[i].Ratings["rating"]), w)
					}
				case nil:
					if err == nil && rows[i].Ratings["rating"] != nil {
						t.Errorf("row %d rating = %v, want missing", i+1, *rows[i].Ratings["rating"])
					}
				}
			}
			if len(problems) != wantProblems {
				t.Errorf("%d problems, want %d: %q", len(problems), wantProblems, problems)
			}
			if tt.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], tt.note)) {
				t.Errorf("notes %q, want one with %q", notes, tt.note)
			}
			// The mapping page agrees: ticked with a note when read,
			// not ticked, saying why, when refused.
			ticked := false
			for _, c := range SuggestMapping(table).RatingColumns {
				ticked = ticked || c == "rating"
			}
			why := WhyNotRating(table, "rating")
			scale := RatingScaleNote(table, "rating")
			switch {
			case wantProblems == 0 && (!ticked || !strings.Contains(scale, "read as their score")):
				t.Errorf("read without problems but ticked %v, scale note %q", ticked, scale)
			case wantProblems > 0 && strings.Contains(tt.want[len(tt.want)-1].(string), "out of") && (ticked || !strings.Contains(why, "on no one scale")):
				t.Errorf("refused but ticked %v, WhyNotRating %q", ticked, why)
			}
		})
	}
}

func fmtRating(v *float64) any {
	if v == nil {
		return "missing"
	}
	return *v
}
