package evaluator

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/proccpu"
)

// parseCase is one answer with the batch size and criterion it is parsed for.
type parseCase struct {
	file string
	n    int
	c    Criterion
}

// answerCases are the answers under testdata/answers. The sim_* files were
// written by the simulated judge (evaluator/simjudge) for the first ten FED
// dialogues with criterion "Coherence"; they are what a BatchEval run of
// the simulated judge parses on every call.
var answerCases = []parseCase{
	{"sim_two_stage_decimal.txt", 10, Criterion{Lo: 1, Hi: 3}},
	{"sim_one_stage_integer.txt", 10, Criterion{Lo: 1, Hi: 5}},
	{"sim_three_stage_decimal.txt", 10, Criterion{Lo: 0, Hi: 10}},
	{"two_stage_wellformed.txt", 3, Criterion{Lo: 1, Hi: 3}},
	{"two_stage_markdown.txt", 3, Criterion{Lo: 1, Hi: 3}},
	{"line_list_chatty.txt", 4, Criterion{Lo: 1, Hi: 3}},
	{"one_stage_integer.txt", 3, Criterion{Lo: 1, Hi: 5}},
	{"three_stage_ranking.txt", 3, Criterion{Lo: 1, Hi: 3}},
	{"garbage.txt", 3, Criterion{Lo: 1, Hi: 3}},
	{"problems.txt", 5, Criterion{Lo: 1, Hi: 3}},
}

// testCriteria are the score ranges the tests use.
var testCriteria = []Criterion{{Lo: 1, Hi: 3}, {Lo: 1, Hi: 5}, {Lo: -2, Hi: 2}, {Lo: 0, Hi: 10}, {Lo: 0, Hi: 100}}

func loadAnswer(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// sameAnswer reports how got differs from want, or "" when they are
// identical: the same nil-ness and float bits of every score, the same
// analyses and the same problems in the same order.
func sameAnswer(got, want BatchAnswer) string {
	if len(got.Scores) != len(want.Scores) {
		return fmt.Sprintf("%d scores, want %d", len(got.Scores), len(want.Scores))
	}
	for i := range got.Scores {
		g, w := got.Scores[i], want.Scores[i]
		if (g == nil) != (w == nil) || (g != nil && math.Float64bits(*g) != math.Float64bits(*w)) {
			return fmt.Sprintf("score %d: %s, want %s", i+1, formatScores(got.Scores[i:i+1]), formatScores(want.Scores[i:i+1]))
		}
	}
	if !reflect.DeepEqual(got.Analyses, want.Analyses) {
		return fmt.Sprintf("analyses %q, want %q", got.Analyses, want.Analyses)
	}
	if !reflect.DeepEqual(got.Problems, want.Problems) {
		return fmt.Sprintf("problems %q, want %q", got.Problems, want.Problems)
	}
	return ""
}

func checkSame(t *testing.T, text string, n int, c Criterion) {
	t.Helper()
	want := oracleParseBatchAnswer(text, n, c)
	got := ParseBatchAnswer(text, n, c)
	if d := sameAnswer(got, want); d != "" {
		t.Errorf("ParseBatchAnswer(%q, %d, [%g, %g]) differs from the oracle: %s", text, n, c.Lo, c.Hi, d)
	}
}

// equivEdgeCases are hand-written inputs aimed at the places where a
// scanner could disagree with the regexps: Unicode case folding, ASCII-only
// \s, \d and \b, line ends, markers and labels split across lines.
var equivEdgeCases = []string{
	"",
	// Plus signs (fix-parse29): before digits, a point, another sign, a
	// word; in lists, "Score of" lines, pairs and ratings.
	"Float Scores: [Sample1:+2.5, Sample2: +1, Sample3:+.5, Sample4: +-1, Sample5: -+1, Sample6 +x]",
	"Score of Sample1: +2\nScore of Sample2 +3.5\nScore of Sample12+\nScore of Sample3 -+1\nFloat Scores: [Sample1: 2, Sample2: +3.5]",
	"Sample1: +1,\nSample2:+0;\nSample3: ++2\nRating +2\nRating: +1 or +2\nRating: -2 to +2\nScore+ 1",
	// Label digits are never a score (fix-parse29): "Score of Sample12"
	// is no score line; a label range "Sample1-3: 2" is reported.
	"Score of Sample12\nScore of Sample1_2: 3\nScore of Sample3a 2\nScore of Sample45 stands\nScore of Sample6 7",
	"Scores:\nSample1-3: 2\nSample 4–5: 1\nSample6 = 2 = 3\nSample7: 2:30",
	"\n",
	"Float Scores: [Sample1:2.5, Sample2:1]",
	"Float Scores: [Sample1:2.5, Sample2:1",
	"Float Scores: []",
	"Float Scores:\n\n[Sample1:2.5]",
	"FLOAT SCORES: [SAMPLE1:2.5, sAmPlE2:1]",
	"Float ſcores: [ſample1:2.5, Sample2:1]", // long s folds to s
	"Float Scores: [Sample1:2.5, Sample2:1]", // Kelvin sign is not in "scores"
	"ScoresX: [Sample1:1]",
	"myscores: [Sample1:1]",
	"scores_: [Sample1:1]",
	"scores é: [Sample1:1]",
	"scores" + strings.Repeat("x", 40) + ": [Sample1:1]",
	"scores" + strings.Repeat("x", 41) + ": [Sample1:1]",
	"scores" + strings.Repeat("é", 40) + ": [Sample1:1]",
	"scores" + strings.Repeat("é", 41) + ": [Sample1:1]",
	"scores [x]: [Sample1:1]",
	"scores\n: [Sample1:1]",
	"Scores:\nSample1: 1\nSample2: 2\nnot a label\nSample3: 3",
	"Scores:\nnote\nnote\nSample1: 1",
	"Scores:\nnote\nnote\nnote\nSample1: 1",
	"Scores: Sample1 1 Sample2: 2",
	"Scores: sample\t#\t3 = 2\n",
	"Scores: sample\v3 = 2\n",
	"Scores: sample\u00a03 = 2\n",
	"Scores: sample 3 is 2, sample 1 is. 2",
	"Scores: sample 3 isn't 2",
	"Scores: sample 3 -2",
	"Scores: sample 3 – 2.5/3",
	"Scores: sample 3 — .5",
	"Scores: sample 3: -.5x",
	"Scores: sample 3: 2.5x",
	"Scores: sample 3: 2.x",
	"Scores: sample 3: 2é",
	"Scores: sample 3: ٣",
	"Scores: sample ٣: 3",
	"Scores: sample 99999999999999999999: 3, sample 1: 1e5",
	"Scores: sample 1: 99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
	"Scores:\n- Sample 1: 2.9/3\n• Sample2: 1\n+ Sample3: 2\n> Sample4: 1\n1) Sample5: 3\n12. score of sample6: 2\n",
	"Scores:\n - score for  sample 1: 2\n",
	"xsample1: 2\nSample2: 1",
	"Sample1: 2\r\nSample2: 1\r",
	"Sample1: 2\rSample2: 1",
	"Sample1 = 2.5.\nSample2: 1 ;\nSample3 : 3/3 ,",
	"Sample1: 3 of 5\nSample2: 2 questions",
	"sample1)**: 2\nsample2 *=* 1",
	"Score of Sample1: 2\nScore of Sample2: 3",
	"Score of Sample1: 2\nScore of Sample1: 3",
	"Score ofSample1: 2",
	"Scoreof Sample1: 2",
	"Score\tfor\nSample1: 2",
	"score of sample 1 – 2.5\nscore for sample 2 —3",
	"score of sample 1 2.5x",
	"ſcore of ſample 1: 2",
	"Analysis of Sample1: alpha\n- Sample 2: beta\n2. Sample3 - gamma\n#### Sample #4\ndelta\nSample1 is better than Sample4 overall.\nFloat Scores: [Sample1:1, Sample2:2, Sample3:3, Sample4:1]",
	"Sample1:\nalpha\nScore of Sample1: 2\nSample2:\nbeta\nScore of Sample2: 3",
	"alpha\nScore of Sample1: 2\nbeta\nScore of Sample2: 3\ngamma",
	"Sample1. x\nSample2( y\nSample3\nSample4x\nSample5 -\n",
	"Sample1: a\nRanking:\n1. Sample1\nScores: [Sample1:1]",
	"Sample1: a\nStep 2: rank them\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nstep2 ranked\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nFinal ranking\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nOverall  ranking of all: x\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nRanked from best to worst\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nrank order\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nrankings\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nranking x\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\nRANKING \t\nSample2: b\nScores: [Sample1:1]",
	"Sample1: a\n---\n===\n\nSample2: b  \n\nHere are the scores:\nScores: [Sample1:1, Sample2:2]",
	"Sample1:\nHere are the scores:\nScores: [Sample1:1, Sample2:2]",
	"**Sample1**: `2.5`\n__Sample2__: 1",
	"Sample1: x\nFloat Scores: [Sample1:1]\nInteger Scores: [Sample1:high]",
	"Sample1: x\nFloat Scores: [Sample1:1]\nInteger Scores: [nothing]",
	"Sample1 is 2\nSample 2 is 3",
	"Sample0: 1\nSample-1: 2\nSample11: 3",
	"Sample #1 #: 2\nSample # 2: 1",
	"Scores: Sample1:1 Sample1:1.0 Sample1:01",
	"Scores: Sample1:1 Sample1:2 Sample1:3",
	"Scores: Sample1:NaN Sample2:Inf",
	"\xff\xfeSample1: 2\xff\nScores: [Sample1:\xff2]",
	"Sample1\u2028: 2",
	"Scores: Sample1 _is 2, Sample2 is2, Sample3 isn't 2, Sample4 )]: 2, Sample5 --2, Sample6 -x, Sample7 - -.5",
	"Scores: Sample1 * - * 2.5.3, Sample2: 2._, Sample3: .5_, Sample4: -.x, Sample5:2_, Sample6 (is) 3",
	"Scores: Sample1:2.5Sample2:1Sample3",
	"Scores:\nSample1\n:\n2\nSample 2 =\t\f3",
	"Scores: sample\n#\n4: 1",
	"Score of Sample 12\nScore of Sample 12.5\nScore of Sample12x 3\nscore of sample 1 -2\nscore of sample 2 --2\nScore of Sample3 2.5x\n",
	"xScore of Sample1: 2\n_score for sample2 = 1\né score for sample3 = 1\nscore for sample 4 : )2\nscore for sample 5 ) : 2\nScore of Sample6 *:* 2.",
	"Good. Score of Sample1: 1 and score of Sample2: 2\nscore\nof\nSample3\n3 trailing\nSCore\nfor SAmple0",
	"scoreſ of sample1: 2\nſcore of ſample2: 3\nscore of sample 3 — 2\nscore of sample 4 –2",
}

func TestParseBatchAnswerMatchesOracle(t *testing.T) {
	for _, tc := range answerCases {
		text := loadAnswer(t, tc.file)
		for n := 0; n <= 12; n++ {
			for _, c := range append(testCriteria, tc.c) {
				checkSame(t, text, n, c)
			}
		}
	}
	for _, text := range equivEdgeCases {
		for n := 0; n <= 12; n++ {
			for _, c := range testCriteria {
				checkSame(t, text, n, c)
			}
		}
	}
}

func FuzzParseBatchAnswerMatchesOracle(f *testing.F) {
	for _, tc := range answerCases {
		f.Add(loadAnswer(f, tc.file), uint8(tc.n), uint8(0))
	}
	for i, text := range equivEdgeCases {
		f.Add(text, uint8(i%13), uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, n, crit uint8) {
		nn := int(n % 13)
		c := testCriteria[int(crit)%len(testCriteria)]
		want := oracleParseBatchAnswer(text, nn, c)
		got := ParseBatchAnswer(text, nn, c)
		if d := sameAnswer(got, want); d != "" {
			t.Errorf("ParseBatchAnswer(%q, %d, [%g, %g]) differs from the oracle: %s", text, nn, c.Lo, c.Hi, d)
		}
	})
}

// BenchmarkParseBatchAnswer parses each answer with the production parser
// and, under "oracle/", with the regexp parser it replaced, so one run
// gives the ratio.
func BenchmarkParseBatchAnswer(b *testing.B) {
	for _, impl := range []struct {
		name  string
		parse func(string, int, Criterion) BatchAnswer
	}{{"new", ParseBatchAnswer}, {"oracle", oracleParseBatchAnswer}} {
		for _, tc := range answerCases {
			text := loadAnswer(b, tc.file)
			b.Run(impl.name+"/"+strings.TrimSuffix(tc.file, ".txt"), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				cpu0, ok := proccpu.Read()
				for b.Loop() {
					impl.parse(text, tc.n, tc.c)
				}
				// cpu-ns/op includes the garbage collector's work on other
				// threads and stays meaningful when the machine is loaded.
				if cpu1, ok1 := proccpu.Read(); ok && ok1 {
					b.ReportMetric(float64(cpu1.Sub(cpu0).CPU)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// TestPatternsUnchanged checks that the whole-text patterns built from the
// *Body constants are, character for character, the ones the oracle uses.
func TestPatternsUnchanged(t *testing.T) {
	pairs := []struct{ got, want string }{
		{scoresMarker.String(), oracleScoresMarker.String()},
		{labelRE.String(), oracleLabelRE.String()},
		{scoreAfterLabel.String(), oracleScoreAfterLabel.String()},
		{listItemRE.String(), oracleListItemRE.String()},
		{strictPair.String(), oracleStrictPair.String()},
		{scoreOfRE.String(), oracleScoreOfRE.String()},
		{scoreOfLine.String(), oracleScoreOfLine.String()},
		{headingRE.String(), oracleHeadingRE.String()},
		{rankingRE.String(), oracleRankingRE.String()},
	}
	for _, p := range pairs {
		if p.got != p.want {
			t.Errorf("pattern %q, want %q", p.got, p.want)
		}
	}
}

// FuzzScannersMatchRegexps checks each scanner of parsescan.go against the
// whole-text regexp it stands for, on any text: a narrower check than the
// oracle comparison, so that a difference is found even where the parser
// would not show it.
func FuzzScannersMatchRegexps(f *testing.F) {
	for _, tc := range answerCases {
		f.Add(loadAnswer(f, tc.file))
	}
	for _, text := range equivEdgeCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkScanners(t, text)
	})
}

func TestScannersMatchRegexps(t *testing.T) {
	for _, tc := range answerCases {
		checkScanners(t, loadAnswer(t, tc.file))
	}
	for _, text := range equivEdgeCases {
		checkScanners(t, text)
	}
}

func checkScanners(t *testing.T, text string) {
	t.Helper()
	ft := newFoldText(text)
	if len(ft.lower) != len(text) || strings.ToLower(text) != strings.ToLower(ft.lower) || strings.ToUpper(text) != strings.ToUpper(ft.lower) {
		t.Fatalf("newFoldText(%q).lower = %q", text, ft.lower)
	}
	same := func(name string, spans []span, want [][]int) {
		t.Helper()
		var got [][]int
		for i, m := range spans {
			n := 2
			if i < len(want) {
				n = len(want[i])
			}
			got = append(got, m[:n])
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s on %q: %v, want %v", name, text, got, want)
		}
	}
	same("scoresMarker", wordMatches(ft, "core", matchScoresMarker), scoresMarker.FindAllStringSubmatchIndex(text, -1))
	same("labelRE", wordMatches(ft, "ample", matchLabel), labelRE.FindAllStringSubmatchIndex(text, -1))
	same("strictPair", wordMatches(ft, "ample", regexpAt(strictPairAt)), strictPair.FindAllStringSubmatchIndex(text, -1))
	same("scoreOfRE", wordMatches(ft, "core", matchScoreOf), scoreOfRE.FindAllStringSubmatchIndex(text, -1))
	same("scoreOfLine", scoreLineMatches(ft), scoreOfLine.FindAllStringSubmatchIndex(text, -1))
	same("headingRE", headingMatches(ft), headingRE.FindAllStringSubmatchIndex(text, -1))
	same("rankingRE", lineMatches(ft, rankingAt, "ran", -1), rankingRE.FindAllStringSubmatchIndex(text, -1))
	// matchScoreAfter on the text and on what follows each label in it.
	rs := []string{text}
	for _, loc := range labelRE.FindAllStringIndex(text, -1) {
		rs = append(rs, text[loc[1]:])
	}
	for _, r := range rs {
		raw, ok := matchScoreAfter(r)
		if m := scoreAfterLabel.FindStringSubmatch(r); (m != nil) != ok || (ok && m[1] != raw) {
			t.Errorf("matchScoreAfter(%q) = %q, %v; scoreAfterLabel gives %q", r, raw, ok, m)
		}
	}
}

// TestNewFoldText checks the eight-bytes-at-a-time lowering against a plain
// loop, for every byte value at every position of a word and of the tail.
func TestNewFoldText(t *testing.T) {
	naive := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	base := []byte("Sample1: ZA@[`{ xyz")
	for pos := range base {
		for c := 0; c < 256; c++ {
			b := append([]byte(nil), base...)
			b[pos] = byte(c)
			s := string(b)
			if got := newFoldText(s); got.s != s || got.lower != naive(s) {
				t.Fatalf("newFoldText(%q).lower = %q, want %q", s, got.lower, naive(s))
			}
		}
	}
}
