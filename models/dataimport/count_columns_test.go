package dataimport

import (
	"reflect"
	"strings"
	"testing"
)

// TestSuggestMappingLeavesCountsUnticked: a SummEval-style file carries
// num_annotators (3 on every row) beside its four quality ratings, and a
// model-output file its length and token counts. Every numeric column was
// ticked as a human rating, so the mapping page offered "num_annotators"
// as ratings to compare the judge with, and rubrics listed it as a human
// rating column. A column named as a count or a measure is left unticked,
// with a note saying why; columns named as ratings or quality dimensions
// are ticked as before.
func TestSuggestMappingLeavesCountsUnticked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		ratings []string
		notes   map[string]string // column: start of WhyNotRating, "" for none
	}{
		{
			name: "SummEval: num_annotators beside four ratings",
			input: "doc_id,summary,coherence,consistency,fluency,relevance,num_annotators\n" +
				"d1,the cat sat on the mat today,4.3333,5,4.6667,3,3\n" +
				"d1,a cat was on a mat somewhere,2,4.3333,3.6667,2.3333,3\n" +
				"d2,the government plans a tax cut,3.6667,5,5,4,3\n" +
				"d2,taxes will be cut for families,1.3333,2,4,1.6667,3\n",
			ratings: []string{"coherence", "consistency", "fluency", "relevance"},
			notes:   map[string]string{"num_annotators": "Not ticked: its name reads as a count", "fluency": ""},
		},
		{
			name: "lengths, tokens and latency of a model's output",
			input: "id,output,length,Word count,n_tokens,latency_ms,human score\n" +
				"a,the first reply is here,23,5,7,310,4\n" +
				"b,a second and longer reply is written here,41,8,11,402,2\n" +
				"c,third one,9,2,3,150,5\n",
			ratings: []string{"human score"},
			notes: map[string]string{
				"length": "Not ticked: its name reads as a count", "Word count": "Not ticked: its name reads as a count",
				"n_tokens": "Not ticked: its name reads as a count", "latency_ms": "Not ticked: its name reads as a count",
				"human score": "",
			},
		},
		{
			name:    "a count of ratings is a count",
			input:   "id,text,num_ratings,rating\na,hello there you,3,4\nb,good bye now,2,1\nc,see you soon,3,2\n",
			ratings: []string{"rating"},
			notes:   map[string]string{"num_ratings": "Not ticked: its name reads as a count"},
		},
		{
			name:    "names that merely contain a count word are ratings",
			input:   "id,text,nuance,account_quality,lengthiness,score (n=3),number\na,hello there you,3,4,2,1,5\nb,good bye now,2,1,5,2,4\nc,see you soon,3,2,1,3,3\n",
			ratings: []string{"nuance", "account_quality", "lengthiness", "score (n=3)", "number"},
			notes:   map[string]string{"nuance": "", "account_quality": "", "lengthiness": "", "score (n=3)": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := mustParse(t, CSV, tc.input)
			if got := SuggestMapping(table).RatingColumns; !reflect.DeepEqual(got, tc.ratings) {
				t.Errorf("rating columns %q, want %q", got, tc.ratings)
			}
			for col, want := range tc.notes {
				got := WhyNotRating(table, col)
				if want == "" && got != "" || !strings.HasPrefix(got, want) {
					t.Errorf("WhyNotRating(%q) = %q, want it to start %q", col, got, want)
				}
			}
		})
	}
}
