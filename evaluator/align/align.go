// Package align helps a person bring the judge closer to human ratings: it
// splits a dataset into a calibration part and a held-out part (seeded),
// finds the calibration samples where the judge and the humans disagree
// most, drafts clearer level descriptions and labelled examples from them
// (by a deterministic template, or by asking the judge itself), checks that
// no example comes from the held-out part, and measures the change on the
// held-out part. It knows nothing of storage or HTTP.
package align

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
)

// DefaultHeldOutShare is the part of the samples kept back for testing.
// Why a half: the held-out correlation needs as many samples as it can
// get to have a useful interval, and drafting needs only the few worst
// disagreements of the other half.
const DefaultHeldOutShare = 0.5

// MinHeldOut is the fewest held-out samples a comparison is worth running
// on: the paired tests need at least four (stats.minPairedSamples) and an
// interval on fewer than ten is too wide to read.
const MinHeldOut = 10

// DraftExamples is how many labelled examples a draft proposes. Why 3: one
// per end and the middle of the scale is what the prompt's level
// descriptions already name, and each example lengthens every call.
const DraftExamples = 3

// splitStream seeds the split's shuffle, so the split does not share a
// stream with any other seeded draw of the same seed.
const splitStream = 0x616c69676e // "align" in ASCII

// Split divides sample ids into a calibration part and a held-out part of
// round(share × n) ids (at least one in each part when n ≥ 2; none when
// n < 2), by a
// shuffle seeded by seed. The ids are sorted first, so the split depends
// only on the set of ids and the seed, never on their order. Both parts
// come back sorted.
func Split(ids []int64, seed int64, share float64) (calibration, heldOut []int64) {
	all := slices.Clone(ids)
	slices.Sort(all)
	all = slices.Compact(all)
	n := len(all)
	k := int(math.Round(share * float64(n)))
	if n >= 2 {
		k = min(max(k, 1), n-1)
	} else {
		k = 0 // one sample cannot be split: it is all calibration
	}
	// The shuffle's swaps depend on n and the seed alone, not on what is
	// swapped: shuffling the places 0..n-1 of the sorted ids puts first the
	// places of the ids a shuffle of the ids would put first. Read in
	// order, those places give each part already sorted, with no sort of
	// half a million ids at a million samples.
	places := make([]int, n)
	for i := range places {
		places[i] = i
	}
	rng := rand.New(rand.NewPCG(uint64(seed), splitStream))
	rng.Shuffle(n, func(i, j int) { places[i], places[j] = places[j], places[i] })
	held := make([]bool, n)
	for _, p := range places[:k] {
		held[p] = true
	}
	heldOut, calibration = make([]int64, 0, k), make([]int64, 0, n-k)
	for i, id := range all {
		if held[i] {
			heldOut = append(heldOut, id)
		} else {
			calibration = append(calibration, id)
		}
	}
	return calibration, heldOut
}

// Item is one calibration sample with the judge's final score and the
// human rating of one criterion.
type Item struct {
	RowID    int64
	SampleID string
	Fields   []evaluator.Text
	Judge    float64
	// Human is the human rating on the judge's scale, which the gap is
	// measured on: Given mapped onto it when Mapped, else Given itself.
	Human float64
	// Given is the rating as the person gave it, on the human scale; read
	// only when Mapped (a FED Overall of 0.4 on its 0.4–4 scale, Human 1
	// on the judge's 1–3).
	Given  float64
	Mapped bool
}

// Gap is how far the judge is from the human, signed (judge − human).
func (it Item) Gap() float64 { return it.Judge - it.Human }

// Disagreements returns the items ordered by how far the judge is from
// the human (largest first; ties by sample id, so the order is stable).
func Disagreements(items []Item) []Item {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b Item) int {
		if c := cmp.Compare(math.Abs(b.Gap()), math.Abs(a.Gap())); c != 0 {
			return c
		}
		return cmp.Compare(a.RowID, b.RowID)
	})
	return out
}

// Draft is a proposed change of one criterion: its level descriptions and
// the labelled examples to show the judge, with a note on how it was made.
type Draft struct {
	Levels   evaluator.Levels    `json:"levels"`
	Examples []evaluator.Example `json:"examples"`
	// Notes say what the draft is based on, in a sentence or two.
	Notes string `json:"notes"`
}

// Apply returns c with the draft's levels and examples.
func (d Draft) Apply(c evaluator.Criterion) evaluator.Criterion {
	c.Levels = d.Levels
	c.Examples = slices.Clone(d.Examples)
	return c
}

// TemplateDraft drafts a change of criterion c from the worst calibration
// disagreements (as Disagreements orders them) without asking any model:
// the level descriptions keep their wording and gain a sentence on the
// direction the judge errs in, and the examples are the DraftExamples
// largest disagreements, each labelled with the human rating. It is what
// the simulated judge gets, and it is deterministic.
func TemplateDraft(c evaluator.Criterion, worst []Item) Draft {
	d := Draft{Levels: c.Levels}
	if len(worst) == 0 {
		d.Notes = "No calibration sample has both a judge score and a human rating: nothing to learn from."
		return d
	}
	n := min(len(worst), DraftExamples)
	mean := 0.0
	for _, it := range worst[:n] {
		mean += it.Gap()
	}
	mean /= float64(n)
	span := c.Hi - c.Lo
	switch {
	case mean > 0.05*span:
		d.Levels.High = joinSentence(c.Levels.High, "Keep the top of the scale for samples that fully meet the criterion; a sample that only looks polished belongs lower.")
		d.Levels.Middle = joinSentence(c.Levels.Middle, "When in doubt between two scores, choose the lower.")
	case mean < -0.05*span:
		d.Levels.Low = joinSentence(c.Levels.Low, "Keep the bottom of the scale for samples that plainly fail the criterion; a short or plain sample can still meet it.")
		d.Levels.Middle = joinSentence(c.Levels.Middle, "When in doubt between two scores, choose the higher.")
	default:
		d.Levels.Middle = joinSentence(c.Levels.Middle, "Use the whole scale: the examples show where people place samples that look alike.")
	}
	for _, it := range worst[:n] {
		// Four decimals, as a rescaled example's (handlers' rescale): the
		// humans' mean of three ratings, 1.6666666666666667, filled the
		// draft's form whole while its reason said 1.67.
		d.Examples = append(d.Examples, evaluator.Example{SampleID: it.SampleID, Fields: slices.Clone(it.Fields), Score: math.Round(it.Human*1e4) / 1e4,
			Reason: exampleReason(it, c)})
	}
	dir := "about right on average"
	if mean > 0 {
		dir = "too high"
	}
	if mean < 0 {
		dir = "too low"
	}
	d.Notes = fmt.Sprintf("Drafted by the product's template from the %d largest disagreements of the calibration part: there the judge scored %s (by %s on average).",
		n, dir, fmtScore(math.Abs(mean)))
	return d
}

// exampleReason is a template example's reason: the human's rating as the
// person gave it and the judge's score. A rating mapped onto the judge's
// scale is quoted as given, with the mapped value beside it: "rated this 1"
// of a FED Overall of 0.4 (0.4 to 4) judged on 1 to 3 put a number in the
// person's mouth they never wrote.
func exampleReason(it Item, c evaluator.Criterion) string {
	who, avg := "A person rated this ", ""
	if c.HumanColumn == "" && len(c.AnnotatorColumns) > 0 {
		// The human rating is the annotators' mean (the run's report
		// reads it so): no one person gave it.
		who, avg = "The annotators rated this ", " on average (mean of "+strings.Join(c.AnnotatorColumns, ", ")+")"
	}
	if it.Mapped && it.Given != it.Human {
		return fmt.Sprintf("%s%s%s (%s on the judge's %s to %s scale); the judge had scored it %s.",
			who, fmtScore(it.Given), avg, fmtScore(it.Human), fmtScore(c.Lo), fmtScore(c.Hi), fmtScore(it.Judge))
	}
	return fmt.Sprintf("%s%s%s; the judge had scored it %s.", who, fmtScore(it.Human), avg, fmtScore(it.Judge))
}

func joinSentence(text, add string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return add
	}
	if strings.Contains(text, add) {
		return text
	}
	// A level is often a few words ("often incoherent"): it ends its
	// sentence before the added one begins, which otherwise read "no Keep
	// the bottom of the scale...".
	if !strings.ContainsAny(text[len(text)-1:], ".!?…:;") {
		text += "."
	}
	return text + " " + add
}

// fmtScore writes a score or rating in a draft's words and the judge's
// prompt: three significant digits ("1.67", "0.125", "87.5"), as people
// write them. It was fmt's %.3g alone, which on a scale of up to a
// thousand or more (a criterion's ends may lie up to a million apart)
// wrote "A person rated this 1.23e+03" of a rating of 1234, and 1000 as
// "1e+03"; a number of a thousand or more is now written whole
// (rounded to the unit), one below 0.0001 in plain decimals, and a zero
// never with a sign.
func fmtScore(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(math.Abs(x), 'g', 3, 64) // "0", "NaN", "+Inf"
	}
	s := strconv.FormatFloat(x, 'g', 3, 64)
	if !strings.ContainsRune(s, 'e') {
		return s
	}
	if math.Abs(x) >= 1 {
		return strconv.FormatFloat(math.Round(x), 'f', -1, 64)
	}
	// Three significant digits after the leading zeros.
	digits := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	s = strconv.FormatFloat(x, 'f', digits, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// CheckExamples refuses examples that cannot be shown to the judge: more
// than evaluator.MaxExamples, a score outside c's range, or a sample that
// is not in the calibration part. An example from the held-out part gets
// its own message: the before/after comparison on held-out samples would
// otherwise test the judge on the answers it was shown.
func CheckExamples(c evaluator.Criterion, examples []evaluator.Example, calibration, heldOut map[string]bool) error {
	if len(examples) > evaluator.MaxExamples {
		return fmt.Errorf("%d examples is too many: at most %d, each one lengthens every call", len(examples), evaluator.MaxExamples)
	}
	seen := map[string]bool{}
	for i, ex := range examples {
		id := strings.TrimSpace(ex.SampleID)
		switch {
		case id == "":
			return fmt.Errorf("example %d names no sample", i+1)
		case heldOut[id]:
			return fmt.Errorf("example %d is sample %q, which is in the held-out part: examples must come from the calibration part, "+
				"or the held-out comparison would test the judge on samples it was shown", i+1, id)
		case !calibration[id]:
			return fmt.Errorf("example %d: sample %q is not in the calibration part of this dataset", i+1, id)
		case seen[id]:
			return fmt.Errorf("example %d repeats sample %q", i+1, id)
		case math.IsNaN(ex.Score) || ex.Score < c.Lo || ex.Score > c.Hi:
			return fmt.Errorf("example %d: score %g is outside %s's range [%g, %g]", i+1, ex.Score, c.Name, c.Lo, c.Hi)
		}
		seen[id] = true
	}
	return nil
}

// Comparison is the held-out before/after of one criterion for one
// correlation measure: the difference is after − before, with its 95%
// interval and paired tests (stats.CompareCorrelations).
type Comparison struct {
	stats.Difference
}

// Before and After name the two correlations of a comparison.
func (c Comparison) Before() float64 { return c.B }

// After is the new version's correlation with the humans.
func (c Comparison) After() float64 { return c.A }

// resamples is the number of bootstrap resamples and permutations, as the
// compare page uses.
const resamples = 1000

// Compare measures the held-out change: after and before are the two
// runs' final scores and human the ratings, aligned by sample (nil where
// missing). The draws are seeded by seed.
func Compare(m stats.Method, before, after, human []*float64, seed uint64) Comparison {
	a, b, h := make([]float64, len(human)), make([]float64, len(human)), make([]float64, len(human))
	for i := range human {
		a[i], b[i], h[i] = orNaN(after[i]), orNaN(before[i]), orNaN(human[i])
	}
	return Comparison{stats.CompareCorrelations(m, a, b, h, resamples, seed)}
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// DraftCases is how many of the worst disagreements the judge is shown when
// it drafts. Why 8: enough to see a pattern, few enough that the prompt
// stays a few thousand tokens on long samples.
const DraftCases = 8
