package report

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
)

// scaledReport is a one-criterion report on the scale lo-hi with these
// final scores and human ratings, one sample per row.
func scaledReport(lo, hi float64, finals, humans []float64) *Report {
	c := CriterionReport{Criterion: evaluator.Criterion{Name: "Engaging", Lo: lo, Hi: hi}, HasHuman: true}
	for i := range finals {
		f, h := finals[i], humans[i]
		c.Samples = append(c.Samples, SampleResult{RowID: int64(i + 1), Final: &f, Human: &h})
	}
	return &Report{Criteria: []CriterionReport{c}}
}

// Two runs of one criterion on different scales (BatchEval 1-3, LLM-Eval
// 0-5): the paired permutation test swaps the runs' scores on a sample,
// which only means something on one scale. B's scores are put on A's
// scale first: the correlations with the humans do not change, and the
// permutation test agrees with Williams' t (here p 0.004 for both; with
// raw 1-3 and 0-5 scores swapped it read 0.054). Runs on the same scale
// are paired as they are.
func TestCompareAcrossScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 80
	humans, a, b := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		humans[i] = 1 + float64(rng.IntN(3))
		a[i] = humans[i] + rng.NormFloat64()*0.5
		// On 0-5, much noisier.
		b[i] = 2.5*(humans[i]-1) + rng.NormFloat64()*1.5
	}
	repA, repB := scaledReport(1, 3, a, humans), scaledReport(0, 5, b, humans)
	p := PairScores(repA, repB, 0, true)
	if got, want := stats.Pearson(p.B, p.Human).Coef, stats.Pearson(b, humans).Coef; math.Abs(got-want) > 1e-9 {
		t.Errorf("B's correlation with the humans changed when put on A's scale: %g, want %g", got, want)
	}
	for _, d := range CompareCriterion(repA, repB, 0, true) {
		if d.Method != stats.MethodPearson {
			continue
		}
		var williams, perm float64 = math.NaN(), math.NaN()
		for _, tt := range d.Tests {
			switch tt.Name {
			case "Williams' t":
				williams = tt.P
			case "paired permutation":
				perm = tt.P
			}
		}
		if !(williams < 0.01) || !(perm < 0.02) {
			t.Errorf("clear difference across scales: Williams p %g, permutation p %g; want both small", williams, perm)
		}
	}
	// Same scale: the scores are paired untouched.
	same := PairScores(repA, scaledReport(1, 3, a, humans), 0, true)
	for i := range a {
		if same.B[i] != a[i] {
			t.Fatalf("same-scale scores changed: %g, want %g", same.B[i], a[i])
		}
	}
}
