package dataimport

import (
	"reflect"
	"strings"
	"testing"
)

func TestExplainIDs(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []IDReport
		// perAnnotator: the note suggests "one row per annotator".
		perAnnotator bool
	}{
		{
			name:  "unique ids need no explanation",
			input: "id,text,score\n1,a b,3\n2,c d,4\n",
		},
		{
			name: "one row per annotator",
			input: "id,text,annotator,score\n" +
				"s1,hello there,ann,3\ns1,hello there,bob,4\ns1,hello there,cy,4\n" +
				"s2,good day,ann,2\ns2,good day,bob,2\ns3,bye now,ann,5\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 3}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 5,
				RatingsDiffer: []string{"score"}, AnnotatorColumn: "annotator"}},
			perAnnotator: true,
		},
		{
			name:  "annotator column found by what it does, not its name",
			input: "sample_id,text,who,score\nx,a b,p,1\nx,a b,q,2\ny,c d,p,3\n",
			want: []IDReport{{Column: "sample_id", Repeated: []RepeatedID{{"x", 2}}, RepeatedIDs: 1, RepeatedRows: 2,
				RatingsDiffer: []string{"score"}, AnnotatorColumn: "who"}},
			perAnnotator: true,
		},
		{
			// A spreadsheet's "Sample ID" is an id name too (idNameKey):
			// its repeats were not explained at all.
			name:  "a repeated Sample ID is explained like a sample_id",
			input: "Sample ID,text,who,score\nx,a b,p,1\nx,a b,q,2\ny,c d,p,3\n",
			want: []IDReport{{Column: "Sample ID", Repeated: []RepeatedID{{"x", 2}}, RepeatedIDs: 1, RepeatedRows: 2,
				RatingsDiffer: []string{"score"}, AnnotatorColumn: "who"}},
			perAnnotator: true,
		},
		{
			// Different texts under one id are different samples sharing
			// an id, not one sample rated by several people: following
			// the per-annotator hint ended in "rows disagree on this field".
			name: "rows of one id differ in text too: duplicate ids",
			input: "id,text,annotator,score\n" +
				"s1,hello there,ann,3\ns1,something else,bob,4\ns2,good day,ann,2\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}}, RepeatedIDs: 1, RepeatedRows: 2,
				RatingsDiffer: []string{"score"}, TextDiffers: []string{"text"}, AnnotatorColumn: "annotator"}},
		},
		{
			name: "annotators named in a column not filled on every row: not counted as text",
			input: "id,text,rater_name,score\n" +
				"s1,hello there,ann,3\ns1,hello there,,4\ns2,good day,ann,2\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}}, RepeatedIDs: 1, RepeatedRows: 2,
				RatingsDiffer: []string{"score"}}},
			perAnnotator: true,
		},
		{
			// Ratings out of one maximum are numbers to the import
			// (fractions.go) but were text here: the per-annotator hint
			// was not given (import43).
			name: "one row per annotator, ratings written out of one maximum",
			input: "id,text,annotator,score\n" +
				"s1,hello there,ann,3/5\ns1,hello there,bob,4 / 5\ns2,good day,ann,2/5\ns2,good day,bob,2\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"score"}, AnnotatorColumn: "annotator"}},
			perAnnotator: true,
		},
		{
			// "2/5" and "2" are the same rating as read: not a difference.
			name: "one score written two ways is the same rating",
			input: "id,text,annotator,score\n" +
				"s1,hello there,ann,2/5\ns1,hello there,bob,2\ns2,good day,ann,4\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}}, RepeatedIDs: 1, RepeatedRows: 2, AnnotatorColumn: "annotator"}},
		},
		{
			// Several maximums: no one scale, so not a rating column
			// here either; the mapping page says what to write.
			name: "ratings out of several maximums are not numbers",
			input: "id,text,annotator,score\n" +
				"s1,hello there,ann,3/5\ns1,hello there,bob,7/10\ns2,good day,ann,2/5\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}}, RepeatedIDs: 1, RepeatedRows: 2,
				TextDiffers: []string{"score"}, AnnotatorColumn: "annotator"}},
		},
		{
			// A rating column written out of a maximum was taken for
			// the annotators' when its name held "rater", or when its
			// maximums differ (then it is no number to statsOf); the
			// offer then imported each rating as an annotator
			// (llmeval44).
			name: "ratings out of a maximum in a column named like a rater are not the annotators",
			input: "id,text,rater_score,who\n" +
				"s1,hello there,3/5,ann\ns1,hello there,4/5,bob\ns2,good day,2/5,ann\ns2,good day,3/5,bob\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"rater_score"}, AnnotatorColumn: "who"}},
			perAnnotator: true,
		},
		{
			name: "ratings out of several maximums are not the annotators",
			input: "id,text,quality,who,score\n" +
				"s1,hello there,3/5,ann,1\ns1,hello there,7/10,bob,2\ns2,good day,3/5,ann,3\ns2,good day,2/5,bob,4\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"score"}, TextDiffers: []string{"quality"}, AnnotatorColumn: "who"}},
		},
		{
			// Ratings in a column named like a rater or a worker were
			// guessed as the annotators' when they were plain numbers,
			// so the upload page described the rows wrongly
			// (llmeval44).
			name: "decimal ratings named worker_rating are not the annotators",
			input: "id,text,worker_rating,who\n" +
				"s1,hello there,3.5,ann\ns1,hello there,4,bob\ns2,good day,3.5,ann\ns2,good day,2,bob\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"worker_rating"}, AnnotatorColumn: "who"}},
			perAnnotator: true,
		},
		{
			name: "whole ratings 1 to 5 named rater_score are not the annotators",
			input: "id,text,rater_score\n" +
				"s1,hello there,3\ns1,hello there,4\ns2,good day,3\ns2,good day,5\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"rater_score"}}},
			perAnnotator: true,
		},
		{
			name: "ratings with a decimal comma named judge_score, whole ones named user_rating, are not the annotators",
			input: "id;text;judge_score;user_rating;who\n" +
				"s1;hello there;3,5;2;ann\ns1;hello there;4;3;bob\ns2;good day;3,5;2;ann\ns2;good day;2;4;bob\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"judge_score", "user_rating"}, AnnotatorColumn: "who"}},
			perAnnotator: true,
		},
		{
			name: "worker ids written as codes are the annotators",
			input: "id,text,score,worker_id\n" +
				"s1,hello there,3,A1B2\ns1,hello there,4,C3D4\ns2,good day,3,A1B2\ns2,good day,5,C3D4\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"score"}, AnnotatorColumn: "worker_id"}},
			perAnnotator: true,
		},
		{
			name: "annotators numbered 1 and 2 under the name annotator are the annotators",
			input: "id,text,score,annotator\n" +
				"s1,hello there,3,1\ns1,hello there,4,2\ns2,good day,3,1\ns2,good day,5,2\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"score", "annotator"}, AnnotatorColumn: "annotator"}},
			perAnnotator: true,
		},
		{
			// Named like a rating but numbered as a platform numbers its
			// workers (beyond any rating scale): read as annotators.
			name: "numbers beyond a rating scale under rater_score stay a candidate",
			input: "id,text,score,rater_score\n" +
				"s1,hello there,3,1023\ns1,hello there,4,2047\ns2,good day,3,1023\ns2,good day,5,2047\n",
			want: []IDReport{{Column: "id", Repeated: []RepeatedID{{"s1", 2}, {"s2", 2}}, RepeatedIDs: 2, RepeatedRows: 4,
				RatingsDiffer: []string{"score", "rater_score"}, AnnotatorColumn: "rater_score"}},
			perAnnotator: true,
		},
		{
			name:  "exact duplicate rows are not per annotator",
			input: "id,text,score\n7,a b,3\n7,a b,3\n8,c d,1\n,e f,2\n",
			want:  []IDReport{{Column: "id", Repeated: []RepeatedID{{"7", 2}}, RepeatedIDs: 1, RepeatedRows: 2, EmptyRows: 1}},
		},
		{
			name:  "not an id name: nothing said",
			input: "name,text\nx,a b\nx,c d\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tt.input), CSV, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := ExplainIDs(tab)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ExplainIDs =\n%+v\nwant\n%+v", got, tt.want)
			}
			for _, r := range got {
				if r.PerAnnotator() != tt.perAnnotator {
					t.Errorf("PerAnnotator = %v, want %v", r.PerAnnotator(), tt.perAnnotator)
				}
			}
		})
	}
}

func TestExplainIDsCapsTheList(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,text\n")
	for i := range 30 {
		for range 2 + i%3 {
			b.WriteString("d" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ",some words\n")
		}
	}
	tab, err := Parse(strings.NewReader(b.String()), CSV, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := ExplainIDs(tab)
	if len(got) != 1 || got[0].RepeatedIDs != 30 || len(got[0].Repeated) != maxRepeatedShown || got[0].Repeated[0].Count != 4 {
		t.Fatalf("ExplainIDs = %+v", got)
	}
	if got[0].RepeatedRows != len(tab.Records) {
		t.Errorf("RepeatedRows = %d, want %d", got[0].RepeatedRows, len(tab.Records))
	}
}

func TestCheckHeader(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		noHeader bool
		want     []string // numbers named; nil means no warning
	}{
		{"a usual header", "id,text,score\n1,a,2\n", false, nil},
		{"data as the first row", "1,the cat sat,4\n2,a dog ran,5\n", false, []string{"1", "4"}},
		{"decimals", "hello world,3.5\nbye,2\n", false, []string{"3.5"}},
		{"annotators numbered under an id header", "id,1,2,3\na,1,2,3\n", false, nil},
		{"numbered columns beside a known word", "text,2020,2021\na,1,2\n", false, nil},
		{"words only", "alpha,beta\nx,y\n", false, nil},
		{"read without a header: nothing to warn about", "1,the cat sat,4\n", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tt.input), CSV, Options{NoHeader: tt.noHeader})
			if err != nil {
				t.Fatal(err)
			}
			note, warn := CheckHeader(tab)
			if warn != (tt.want != nil) || !reflect.DeepEqual(note.Numbers, tt.want) {
				t.Fatalf("CheckHeader = %+v, %v; want numbers %v", note, warn, tt.want)
			}
			if warn && !strings.Contains(note.Message(), "not imported") {
				t.Errorf("message %q does not say the row would be lost", note.Message())
			}
		})
	}
}

func TestParseWithoutHeader(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantCols []string
		wantRows [][]string
		wantLine []int
	}{
		{"first row kept as data", "1,the cat sat,4\n2,\"a dog\nran\",5\n", []string{"column_1", "column_2", "column_3"},
			[][]string{{"1", "the cat sat", "4"}, {"2", "a dog\nran", "5"}}, []int{1, 2}},
		{"repeated values in the first row are fine", "3,3,x\n", []string{"column_1", "column_2", "column_3"},
			[][]string{{"3", "3", "x"}}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tt.input), CSV, Options{NoHeader: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tab.Columns, tt.wantCols) || !tab.Generated {
				t.Fatalf("columns %v (generated %v), want %v", tab.Columns, tab.Generated, tt.wantCols)
			}
			if len(tab.Records) != len(tt.wantRows) {
				t.Fatalf("%d records, want %d", len(tab.Records), len(tt.wantRows))
			}
			for i, rec := range tab.Records {
				for j, col := range tab.Columns {
					if rec.Values[col] != tt.wantRows[i][j] {
						t.Errorf("row %d %s = %q, want %q", i, col, rec.Values[col], tt.wantRows[i][j])
					}
				}
				if rec.Line != tt.wantLine[i] {
					t.Errorf("row %d line %d, want %d", i, rec.Line, tt.wantLine[i])
				}
			}
		})
	}
	// With a header, the same repeated first row is refused, and the
	// message names the way out where the caller has one (the upload
	// form's checkbox), else what the first row must hold: the API and the
	// command line have no checkbox to tick.
	for _, tt := range []struct {
		hint, want, not string
	}{
		{`tick "The first row is data"`, `tick "The first row is data"`, "header row of unique column names"},
		{"", "The first row must be a header row of unique column names", "tick"},
	} {
		_, err := Parse(strings.NewReader("3,3,x\n4,5,y\n"), CSV, Options{HeaderHint: tt.hint})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), tt.not) {
			t.Errorf("hint %q: error %v, want %q and not %q", tt.hint, err, tt.want, tt.not)
		}
	}
}
