package evaluator

import (
	"math"
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/internal/proccpu"
)

// analyzeRateCases are answers to the analyze-rate prompt, with the places
// where the keyword scanner could disagree with the regexp.
var analyzeRateCases = []string{
	"",
	"The response asks a question and adds a fact.\nRating: 2.5",
	"Lively and specific.\n\n**Rating**: 3",
	"Dull.\nRating - 1",
	"Somewhat engaging.\nScore: 2",
	"Good.\nFinal rating (1-3): 2.8/3",
	"Rating: 1 at first sight.\nOn reflection it is better.\nRating: 2\nScore: 3",
	"It is on topic. Rating: 2.",
	"Negative tone.\nRating: -1.5",
	"Fine.\nRating: <score>",
	"I would score it highly.",
	"(Simulated judge: this analysis and rating are computed from word counts, lexical variety, questions and word overlap. No language model read the sample.)\n\nThe conversation has 75 words (length 1.00), 43 of them distinct (variety 0.57), and asks 6 questions (questions 1.00). On Coherence that makes it one of the stronger samples.\n\nRating: 2.4",
	"RATING: 2\nſcore: 3\nscoring: 1\nratings: 2\nxrating: 1\n_score: 2\né score: 2\nrating\n: 2",
	"Rating (a\n): 2\nRating (1-3) (x): 2\nRating * ( 1 - 3 ) *: 2.5\nrating–2\nscore—3\nrating = [2]",
	"Score: Rating: 2\nrating: score: 3",
	"Rating: 2\r\nScore: 3\r",
	"rating:\nscore:",
	"Lively.\nRating: 3\nRating: 1 means dull, 3 means lively.",
	"Lively.\nRating: 2.5\nScore: 1-3\n(Rating: 1 to 3)\nRating: [1-3]\nrating: 2 — 3",
}

func checkAnalyzeRateSame(t *testing.T, text string, c Criterion) {
	t.Helper()
	gs, ga, gp := ParseAnalyzeRate(text, c)
	ws, wa, wp := oracleParseAnalyzeRate(text, c)
	if (gs == nil) != (ws == nil) || (gs != nil && math.Float64bits(*gs) != math.Float64bits(*ws)) || ga != wa || gp != wp {
		t.Errorf("ParseAnalyzeRate(%q, [%g, %g]) = %v, %q, %q; the oracle gives %v, %q, %q",
			text, c.Lo, c.Hi, formatScores([]*float64{gs}), ga, gp, formatScores([]*float64{ws}), wa, wp)
	}
	ft := newFoldText(cleanMarkdown(text))
	var got [][]int
	for _, m := range ratingLines(ft) {
		got = append(got, m[:6])
	}
	if want := ratingLineRE.FindAllStringSubmatchIndex(ft.s, -1); (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
		t.Errorf("ratingLines(%q) = %v, ratingLineRE gives %v", ft.s, got, want)
	}
}

func TestParseAnalyzeRateMatchesOracle(t *testing.T) {
	if ratingLineRE.String() != oracleRatingLineRE.String() {
		t.Errorf("ratingLineRE %q, want %q", ratingLineRE, oracleRatingLineRE)
	}
	for _, text := range append(analyzeRateCases, equivEdgeCases...) {
		for _, c := range testCriteria {
			checkAnalyzeRateSame(t, text, c)
		}
	}
}

func FuzzParseAnalyzeRateMatchesOracle(f *testing.F) {
	for i, text := range analyzeRateCases {
		f.Add(text, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, crit uint8) {
		checkAnalyzeRateSame(t, text, testCriteria[int(crit)%len(testCriteria)])
	})
}

// BenchmarkParseAnalyzeRate parses the simulated judge's analyze-rate
// answer with the production parser and, under "oracle", the regexp one.
func BenchmarkParseAnalyzeRate(b *testing.B) {
	text := analyzeRateCases[11]
	c := Criterion{Lo: 1, Hi: 3}
	for _, impl := range []struct {
		name  string
		parse func(string, Criterion) (*float64, string, string)
	}{{"new", ParseAnalyzeRate}, {"oracle", oracleParseAnalyzeRate}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := proccpu.Read()
			for b.Loop() {
				impl.parse(text, c)
			}
			if cpu1, ok1 := proccpu.Read(); ok && ok1 {
				b.ReportMetric(float64(cpu1.Sub(cpu0).CPU)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
