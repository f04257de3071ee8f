package dataimport

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// Ratings as people type them in a spreadsheet ("4 stars", "4 out of 5")
// or in words ("good") under a rating's name: the mapping page ticked a
// "4 stars" column for the judge to read (handing it the humans' scores)
// without a word, and said nothing of a "rating" column of words. They
// are now neither shown nor rated, and the page says how to correct them.
func TestSuggestMappingWrittenRatings(t *testing.T) {
	const questions = "Where is my order?|How do I reset my password?|Can I pay by card?|What are your hours?"
	tests := []struct {
		name    string
		col     string
		values  string // one per row, "|" between
		why     []string
		applyIn string // the import's message for the column ticked as a rating
	}{
		{"stars", "rating", "4 stars|5 stars|3 stars|1 star", []string{`such as “4 stars”`, "(write 4)"}, "(write the number alone: 4)"},
		// "4 out of 5" is read as 4 now, its column out of one maximum
		// (TestRatingsOutOfAMaximum).
		{"words", "rating", "good|bad|ok|good", []string{"its name reads like a rating", `(e.g. “good”)`, "write them as numbers"}, `the rating “good” is not a number`},
		{"phrases", "human_rating", "very good|bad|quite ok|not great", []string{"its name reads like a rating", `(e.g. “very good”)`}, `the rating “very good” is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("id,question," + tt.col + "\n")
			qs, vs := strings.Split(questions, "|"), strings.Split(tt.values, "|")
			for i := range qs {
				b.WriteString("s" + string(rune('1'+i)) + ",\"" + qs[i] + "\",\"" + vs[i] + "\"\n")
			}
			table, err := Parse(strings.NewReader(b.String()), CSV, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			m := SuggestMapping(table)
			for _, f := range m.Fields {
				if f.Column == tt.col {
					t.Errorf("%q is shown to the judge: %+v", tt.col, m.Fields)
				}
			}
			for _, c := range m.RatingColumns {
				if c == tt.col {
					t.Errorf("%q is ticked as a rating", tt.col)
				}
			}
			why := WhyNotRating(table, tt.col)
			for _, w := range tt.why {
				if !strings.Contains(why, w) {
					t.Errorf("WhyNotRating = %q, want %q in it", why, w)
				}
			}
			if shown := WhyNotShown(table, tt.col); shown != "" {
				t.Errorf("WhyNotShown = %q, want nothing (WhyNotRating speaks)", shown)
			}
			_, err = table.Apply(Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "question", Label: "Question"}}, RatingColumns: []string{tt.col}})
			if err == nil || !strings.Contains(err.Error(), tt.applyIn) || !strings.Contains(err.Error(), "line 2") {
				t.Errorf("Apply: %v, want line 2 and %q", err, tt.applyIn)
			}
		})
	}
}

// TestWhyNotRatingListOfRatings: a JSON Lines file with several annotators'
// ratings of a sample as a list ("scores": [4, 5]) was said to hold words,
// and told to write its ratings as numbers, which they are. The mapping
// page now says they are lists and how to lay them out, as the import's own
// message does when such a column is ticked.
func TestWhyNotRatingListOfRatings(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		col     string
		want    []string // in WhyNotRating's text
		notWant []string
	}{
		{
			name:    "lists of annotators' ratings",
			input:   `{"id":"a","text":"hello there","scores":[4,5]}` + "\n" + `{"id":"b","text":"bye now","scores":[2, 3]}` + "\n" + `{"id":"c","text":"maybe","scores":null}` + "\n",
			col:     "scores",
			want:    []string{"lists of numbers", "(e.g. “[4,5]”)", "a column of its own", "one row per annotator"},
			notWant: []string{"words", "write them as numbers"},
		},
		{
			name:  "words in a rating column are still words",
			input: `{"id":"a","text":"hello there","scores":"good"}` + "\n" + `{"id":"b","text":"bye now","scores":"bad"}` + "\n",
			col:   "scores",
			want:  []string{"its rows hold words", "write them as numbers"},
		},
		{
			name:    "lists of words are no ratings to explain as lists",
			input:   `{"id":"a","text":"hello there","scores":["good","bad"]}` + "\n" + `{"id":"b","text":"bye now","scores":["ok"]}` + "\n",
			col:     "scores",
			notWant: []string{"lists of numbers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := mustParse(t, JSONL, tt.input)
			why := WhyNotRating(table, tt.col)
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("WhyNotRating = %q, want %q in it", why, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(why, w) {
					t.Errorf("WhyNotRating = %q, want no %q in it", why, w)
				}
			}
			for _, c := range SuggestMapping(table).RatingColumns {
				if c == tt.col {
					t.Errorf("%q is ticked as a rating", tt.col)
				}
			}
		})
	}
}

// TestWhyNotRatingIDColumnWithAStrayValue: an id column of numbers with one
// value that is not a number ("id": true in a JSON Lines file) was told "1
// of 4 rows is not numbers ...; a rating column holds only numbers", as if
// its values were ratings to correct. A column named as an id is an id
// first, whatever its values.
func TestWhyNotRatingIDColumnWithAStrayValue(t *testing.T) {
	tests := []struct {
		name, input, col, want string
	}{
		{"id with a true", `{"id":1,"text":"a b","r":4}` + "\n" + `{"id":2,"text":"c d","r":2}` + "\n" + `{"id":3,"text":"e f","r":3}` + "\n" + `{"id":true,"text":"g h","r":3}` + "\n",
			"id", "Not ticked: its name looks like an id or a row number."},
		{"row_id with a letter", "row_id,text,r\n1,a b,4\n2,c d,2\n3x,e f,3\n4,g h,1\n",
			"row_id", "Not ticked: its name looks like an id or a row number."},
		{"a rating with a stray word still says so", "id,text,r\nx1,a b,4\nx2,c d,2\nx3,e f,good\nx4,g h,1\n",
			"r", "Not ticked: 1 of 4 rows is not numbers (e.g. “good”); a rating column holds only numbers or empty cells."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := CSV
			if strings.HasPrefix(tt.input, "{") {
				f = JSONL
			}
			if got := WhyNotRating(mustParse(t, f, tt.input), tt.col); got != tt.want {
				t.Errorf("WhyNotRating(%s) = %q, want %q", tt.col, got, tt.want)
			}
		})
	}
}
