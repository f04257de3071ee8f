package align

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
)

func TestSplitIsSeededDisjointAndOrderFree(t *testing.T) {
	ids := make([]int64, 40)
	for i := range ids {
		ids[i] = int64(100 + i)
	}
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	tests := []struct {
		name        string
		ids         []int64
		share       float64
		wantHeldOut int
	}{
		{"half of 40", ids, 0.5, 20},
		{"a quarter of 40", ids, 0.25, 10},
		{"never all held out", ids[:3], 1, 2},
		{"never none held out", ids[:3], 0, 1},
		{"one sample cannot be split", ids[:1], 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cal, held := Split(tt.ids, 7, tt.share)
			if len(held) != tt.wantHeldOut || len(cal)+len(held) != len(tt.ids) {
				t.Fatalf("sizes: %d calibration, %d held out; want %d held out of %d", len(cal), len(held), tt.wantHeldOut, len(tt.ids))
			}
			all := append(slices.Clone(cal), held...)
			slices.Sort(all)
			want := slices.Clone(tt.ids)
			slices.Sort(want)
			if !slices.Equal(all, want) {
				t.Errorf("the parts do not cover the ids exactly once: %v", all)
			}
		})
	}
	cal1, held1 := Split(ids, 7, 0.5)
	cal2, held2 := Split(reversed, 7, 0.5)
	if !slices.Equal(cal1, cal2) || !slices.Equal(held1, held2) {
		t.Error("the split depends on the order of the ids")
	}
	_, held3 := Split(ids, 8, 0.5)
	if slices.Equal(held1, held3) {
		t.Error("seeds 7 and 8 gave the same split")
	}
}

func items() []Item {
	return []Item{
		{RowID: 1, SampleID: "a", Judge: 3, Human: 3},
		{RowID: 2, SampleID: "b", Judge: 5, Human: 1, Fields: []evaluator.Text{{Label: "Reply", Value: "Polished but wrong."}}},
		{RowID: 3, SampleID: "c", Judge: 4, Human: 2},
		{RowID: 4, SampleID: "d", Judge: 1, Human: 3},
		{RowID: 5, SampleID: "e", Judge: 4.5, Human: 4},
	}
}

func TestDisagreementsLargestFirstStable(t *testing.T) {
	var got []string
	for _, it := range Disagreements(items()) {
		got = append(got, it.SampleID)
	}
	// |gaps|: b 4, c 2, d 2 (tie: row order), e 0.5, a 0.
	if want := []string{"b", "c", "d", "e", "a"}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestTemplateDraftLabelsWorstWithHumanRatings(t *testing.T) {
	c := evaluator.Criterion{Name: "Correct", Lo: 1, Hi: 5, Levels: evaluator.Levels{Low: "wrong", Middle: "partly right", High: "right"}}
	worst := Disagreements(items())
	d := TemplateDraft(c, worst)
	if len(d.Examples) != DraftExamples {
		t.Fatalf("%d examples, want %d", len(d.Examples), DraftExamples)
	}
	for i, ex := range d.Examples {
		if ex.SampleID != worst[i].SampleID || ex.Score != worst[i].Human {
			t.Errorf("example %d = %s scored %g, want %s scored by the human %g", i+1, ex.SampleID, ex.Score, worst[i].SampleID, worst[i].Human)
		}
	}
	if d.Examples[0].Fields[0].Value != "Polished but wrong." {
		t.Errorf("example fields not carried: %+v", d.Examples[0].Fields)
	}
	// b, c, d: gaps +4, +2, −2, mean +4/3 on a span of 4: the judge is too high.
	if !strings.HasPrefix(d.Levels.High, "right. ") || !strings.Contains(d.Levels.High, "Keep the top of the scale") || d.Levels.Low != "wrong" {
		t.Errorf("levels = %+v: want the high end tightened and the low end kept", d.Levels)
	}
	if !strings.Contains(d.Notes, "too high") {
		t.Errorf("notes = %q", d.Notes)
	}
	again := TemplateDraft(c, worst)
	if again.Notes != d.Notes || again.Levels != d.Levels || len(again.Examples) != len(d.Examples) {
		t.Error("the template draft is not deterministic")
	}
	if e := TemplateDraft(c, nil); len(e.Examples) != 0 || e.Levels != c.Levels {
		t.Errorf("a draft from nothing changed the criterion: %+v", e)
	}
}

// TestTemplateDraftExampleScoresToFourDecimals: a human rating that is the
// mean of three annotators (5/3) filled the draft's example score whole,
// "1.6666666666666667", while the example's reason said 1.67; the score is
// kept to four decimals, as a rescaled example's is.
func TestTemplateDraftExampleScoresToFourDecimals(t *testing.T) {
	c := evaluator.Criterion{Name: "Correct", Lo: 1, Hi: 3}
	worst := Disagreements([]Item{
		{RowID: 1, SampleID: "a", Judge: 3, Human: 5.0 / 3},
		{RowID: 2, SampleID: "b", Judge: 1, Human: 7.0 / 3},
		{RowID: 3, SampleID: "c", Judge: 2.5, Human: 2},
	})
	want := map[string]float64{"a": 1.6667, "b": 2.3333, "c": 2}
	d := TemplateDraft(c, worst)
	if len(d.Examples) != 3 {
		t.Fatalf("%d examples, want 3", len(d.Examples))
	}
	for _, ex := range d.Examples {
		if ex.Score != want[ex.SampleID] {
			t.Errorf("example %s scored %v, want %v", ex.SampleID, ex.Score, want[ex.SampleID])
		}
		if err := CheckExamples(c, []evaluator.Example{ex}, nil, nil); err != nil && strings.Contains(err.Error(), "range") {
			t.Errorf("example %s refused: %v", ex.SampleID, err)
		}
	}
}

func TestCheckExamplesRefusesHeldOutSamples(t *testing.T) {
	c := evaluator.Criterion{Name: "Correct", Lo: 1, Hi: 5}
	cal := map[string]bool{"a": true, "b": true}
	held := map[string]bool{"h1": true}
	ex := func(id string, score float64) evaluator.Example { return evaluator.Example{SampleID: id, Score: score} }
	tests := []struct {
		name     string
		examples []evaluator.Example
		wantErr  string
	}{
		{"calibration samples pass", []evaluator.Example{ex("a", 2), ex("b", 5)}, ""},
		{"held-out sample refused", []evaluator.Example{ex("a", 2), ex("h1", 3)}, `example 2 is sample "h1", which is in the held-out part`},
		{"unknown sample refused", []evaluator.Example{ex("zz", 3)}, "not in the calibration part"},
		{"repeat refused", []evaluator.Example{ex("a", 2), ex("a", 3)}, "repeats"},
		{"score out of range refused", []evaluator.Example{ex("a", 6)}, "outside Correct's range"},
		{"no sample refused", []evaluator.Example{ex(" ", 2)}, "names no sample"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckExamples(c, tt.examples, cal, held)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseDraftReadsTheJudgesAnswer(t *testing.T) {
	c := evaluator.Criterion{Name: "Correct", Lo: 1, Hi: 5, Levels: evaluator.Levels{Low: "wrong", Middle: "partly", High: "right"}}
	worst := Disagreements(items())
	tests := []struct {
		name       string
		answer     string
		wantLevels evaluator.Levels
		wantIDs    []string
		wantErr    bool
	}{
		{"fenced, numbers", "```json\n{\"low\": \"factually wrong\", \"middle\": \"m\", \"high\": \"all facts right\", \"examples\": [{\"case\": 1, \"reason\": \"wrong fact\"}, {\"case\": 3}]}\n```",
			evaluator.Levels{Low: "factually wrong", Middle: "m", High: "all facts right"}, []string{"b", "d"}, false},
		{"prose around, case labels, missing level kept", "Here you go: {\"high\": \"every fact right\", \"examples\": [{\"case\": \"Case2\"}, {\"case\": \"2\"}, {\"case\": 99}]} Hope it helps.",
			evaluator.Levels{Low: "wrong", Middle: "partly", High: "every fact right"}, []string{"c"}, false},
		{"no JSON", "I would tighten the high end.", evaluator.Levels{}, nil, true},
		{"changes nothing", `{"examples": [{"case": 42}]}`, evaluator.Levels{}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDraft(tt.answer, c, worst)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("read %+v from an unusable answer", d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ex := range d.Examples {
				ids = append(ids, ex.SampleID)
				if ex.Score != worst[slices.IndexFunc(worst, func(it Item) bool { return it.SampleID == ex.SampleID })].Human {
					t.Errorf("example %s scored %g, not the human rating", ex.SampleID, ex.Score)
				}
			}
			if d.Levels != tt.wantLevels || !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("draft = %+v with %v, want %+v with %v", d.Levels, ids, tt.wantLevels, tt.wantIDs)
			}
		})
	}
	msgs := BuildDraftPrompt(evaluator.Rubric{Task: "answers"}, c, worst[:2])
	if u := msgs[1].Content; !strings.Contains(u, "Case1 (judge 5, people 1):\nReply: Polished but wrong.") || !strings.Contains(u, "Case2 (judge 4, people 2)") {
		t.Errorf("draft prompt does not list the cases:\n%s", u)
	}
}

func TestCompareIsAfterMinusBeforeWithInterval(t *testing.T) {
	p := func(x float64) *float64 { return &x }
	var human, before, after []*float64
	for i := range 30 {
		h := float64(i%5 + 1)
		human = append(human, p(h))
		after = append(after, p(h+0.3*math.Sin(float64(i))))
		before = append(before, p(3+0.8*math.Cos(float64(i*7))+0.2*h))
	}
	human = append(human, nil) // a sample without a human rating is left out, not counted as 0
	before, after = append(before, p(5)), append(after, p(1))
	got := Compare(stats.MethodPearson, before, after, human, 1)
	if got.N != 30 || got.Missing != 1 {
		t.Fatalf("n = %d, missing = %d; want 30 and 1", got.N, got.Missing)
	}
	if !(got.After() > got.Before()) || math.Abs(got.Diff-(got.After()-got.Before())) > 1e-12 {
		t.Errorf("after %g, before %g, diff %g: want after − before > 0", got.After(), got.Before(), got.Diff)
	}
	if !(got.CILow <= got.Diff && got.Diff <= got.CIHigh) || got.Interval != "Zou (2007)" {
		t.Errorf("interval [%g, %g] (%s) does not hold the difference %g", got.CILow, got.CIHigh, got.Interval, got.Diff)
	}
}

// TestJoinSentenceEndsTheLevel: the template's draft adds a sentence to a
// criterion's level description; a level of a few words ("no", "often
// incoherent") ran into it ("no Keep the bottom of the scale...").
func TestJoinSentenceEndsTheLevel(t *testing.T) {
	const add = "Keep the bottom of the scale."
	for _, tc := range []struct{ level, want string }{
		{"no", "no. Keep the bottom of the scale."},
		{"often incoherent ", "often incoherent. Keep the bottom of the scale."},
		{"Plainly fails.", "Plainly fails. Keep the bottom of the scale."},
		{"Is it true?", "Is it true? Keep the bottom of the scale."},
		{"", add},
		{"no. Keep the bottom of the scale.", "no. Keep the bottom of the scale."},
	} {
		if got := joinSentence(tc.level, add); got != tc.want {
			t.Errorf("joinSentence(%q) = %q, want %q", tc.level, got, tc.want)
		}
	}
}

// TestTemplateDraftWritesScoresPlainly: a draft's reasons, notes and the
// judge's drafting prompt wrote scores with %.3g, which on a wide scale
// (a criterion's ends may lie up to a million apart) read "A person
// rated this 1.23e+03; the judge had scored it 1e+03". Scores are written
// as people write them, three significant digits below a thousand, whole
// from there, never in exponent form.
func TestTemplateDraftWritesScoresPlainly(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {2, "2"}, {2.5, "2.5"}, {5.0 / 3, "1.67"}, {0.125, "0.125"}, {87.54, "87.5"},
		{-0.95, "-0.95"}, {999.4, "999"}, {999.5, "1000"}, {1000, "1000"}, {1234.4, "1234"}, {-25000, "-25000"}, {1e6, "1000000"},
		{0.0123, "0.0123"}, {0.00001, "0.00001"}, {0.00001234, "0.0000123"},
	} {
		if got := fmtScore(tc.x); got != tc.want {
			t.Errorf("fmtScore(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	c := evaluator.Criterion{Name: "Points", Lo: 0, Hi: 10000}
	d := TemplateDraft(c, Disagreements([]Item{{RowID: 1, SampleID: "a", Judge: 1000, Human: 1234}}))
	if want := "A person rated this 1234; the judge had scored it 1000."; d.Examples[0].Reason != want {
		t.Errorf("reason %q, want %q", d.Examples[0].Reason, want)
	}
	if strings.Contains(d.Notes, "e+") {
		t.Errorf("notes %q write a score in exponent form", d.Notes)
	}
	for _, m := range BuildDraftPrompt(evaluator.Rubric{Criteria: []evaluator.Criterion{c}}, c, Disagreements([]Item{{RowID: 1, SampleID: "a", Judge: 1000, Human: 1234}})) {
		if strings.Contains(m.Content, "e+03") {
			t.Errorf("the drafting prompt writes a score in exponent form: %q", m.Content)
		}
	}
	// The annotators' mean is said to be theirs, not one person's.
	mean := evaluator.Criterion{Name: "Coherent", Lo: 0, Hi: 2, AnnotatorColumns: []string{"a", "b", "c"}}
	d = TemplateDraft(mean, []Item{{RowID: 1, SampleID: "s", Judge: 0.5, Human: 5.0 / 3}})
	if want := "The annotators rated this 1.67 on average (mean of a, b, c); the judge had scored it 0.5."; d.Examples[0].Reason != want {
		t.Errorf("reason %q, want %q", d.Examples[0].Reason, want)
	}
}
