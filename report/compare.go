package report

import (
	"math"
	"strconv"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// comparisonSeed fixes the paired resampling of run comparisons so a page
// reads the same every time it is shown.
const comparisonSeed = 20240102

// SignificanceLevel is the level below which a (Holm-corrected) p-value
// counts as a real difference: the conventional 5%, matching the 95%
// intervals shown beside it.
const SignificanceLevel = 0.05

// PairedScores are two runs' final scores and the human rating on the
// samples both runs judged, in run A's sample order, NaN where a score or
// rating is missing.
type PairedScores struct {
	A, B, Human []float64
	// Unmatched counts run A's samples with no counterpart in run B.
	Unmatched int
}

// SampleKey pairs samples of two runs: by row on the same dataset, by the
// sample's id on a noisy copy (whose rows are new rows with the same ids).
func SampleKey(s SampleResult, sameDataset bool) string {
	if sameDataset {
		return "row:" + strconv.FormatInt(s.RowID, 10)
	}
	return "id:" + s.ExternalID
}

// PairScores matches the samples of two runs' reports on one criterion,
// with B's scores put on A's scale when the scales differ. The human
// rating is run A's (on a noisy copy the ratings are copied with
// the samples). A criterion index out of range in either report gives no
// pairs.
func PairScores(a, b *Report, criterion int, sameDataset bool) PairedScores {
	var p PairedScores
	if criterion < 0 || criterion >= len(a.Criteria) || criterion >= len(b.Criteria) {
		return p
	}
	byKey := map[string]SampleResult{}
	for _, s := range b.Criteria[criterion].Samples {
		byKey[SampleKey(s, sameDataset)] = s
	}
	val := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return *v
	}
	// B's scores on A's scale when the runs' scales differ (BatchEval's
	// 1-5 against LLM-Eval's 0-5): a correlation does not change, and the
	// paired permutation test, which swaps the two runs' scores on a
	// sample, then swaps like with like. On raw scores of two scales the
	// swaps mix the scales and the test lost its power (p 0.38 beside
	// Williams' 0.001).
	ca, cb := a.Criteria[criterion].Criterion, b.Criteria[criterion].Criterion
	onA := func(v float64) float64 { return v }
	if (ca.Lo != cb.Lo || ca.Hi != cb.Hi) && ca.Lo < ca.Hi && cb.Lo < cb.Hi {
		onA = func(v float64) float64 { return stats.Rescale(v, cb.Lo, cb.Hi, ca.Lo, ca.Hi) }
	}
	for _, s := range a.Criteria[criterion].Samples {
		sb, ok := byKey[SampleKey(s, sameDataset)]
		if !ok {
			p.Unmatched++
			continue
		}
		p.A = append(p.A, val(s.Final))
		p.B = append(p.B, onA(val(sb.Final)))
		p.Human = append(p.Human, val(s.Human))
	}
	return p
}

// CompareCriterion is the paired comparison of two runs' agreement with
// the humans on one criterion, one stats.Difference per coefficient in
// stats.Methods order (Pearson: Williams' t, Steiger's z and Zou's
// interval; Spearman and Kendall: paired bootstrap and permutation).
// Every figure is NaN when the criterion has no human ratings.
func CompareCriterion(a, b *Report, criterion int, sameDataset bool) []stats.Difference {
	p := PairScores(a, b, criterion, sameDataset)
	out := make([]stats.Difference, 0, 3)
	for _, m := range stats.Methods() {
		out = append(out, stats.CompareCorrelations(m, p.A, p.B, p.Human, stats.DefaultResamples, comparisonSeed))
	}
	return out
}

// CompareAverage is the paired comparison of two runs' mean Pearson
// correlation over the criteria both have (the "average r" of a results
// table), with the samples matched as in PairScores. Given criteria
// (indexes), it averages over those only: the experiment table averages
// every run over the criteria all its compared runs have figures for, and
// its paired tests average over the same ones.
func CompareAverage(a, b *Report, sameDataset bool, criteria ...int) stats.AveragedDifference {
	var as, bs, hs [][]float64
	ks := criteria
	if ks == nil {
		for k := range min(len(a.Criteria), len(b.Criteria)) {
			ks = append(ks, k)
		}
	}
	for _, k := range ks {
		p := PairScores(a, b, k, sameDataset)
		if len(p.Human) == 0 {
			continue
		}
		as, bs, hs = append(as, p.A), append(bs, p.B), append(hs, p.Human)
	}
	if len(as) == 0 {
		nan := math.NaN()
		return stats.AveragedDifference{Method: stats.MethodPearson, A: nan, B: nan, Diff: nan, CILow: nan, CIHigh: nan, P: nan}
	}
	return stats.CompareAveraged(stats.MethodPearson, as, bs, hs, stats.DefaultResamples, comparisonSeed)
}
