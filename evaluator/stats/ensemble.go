package stats

import "math"

// BatchScores is one batch of one round: Scores[i] is the score sample i
// got in this batch and Means[i] its mean over all rounds. Samples whose
// score is missing in this batch are left out by the caller, so both
// slices have the same length.
type BatchScores struct {
	Scores, Means []float64
}

// BatchBias measures how far one batch pulled its samples' scores, all in
// the same direction, away from their means over all rounds (method.md):
//
//	|Σ s_i - Σ mean_i| / |b|
//
// Errors of opposite sign cancel on purpose: the paper uses it to detect a
// batch that lifts or lowers everyone at once, which is what an unbalanced
// (homogeneous) batch does. It is NaN for an empty batch, and panics if
// Scores and Means differ in length.
func BatchBias(b BatchScores) float64 {
	mustSameLen(len(b.Scores), len(b.Means))
	if len(b.Scores) == 0 {
		return math.NaN()
	}
	var sumS, sumM float64
	for i := range b.Scores {
		sumS += b.Scores[i]
		sumM += b.Means[i]
	}
	return math.Abs(sumS-sumM) / float64(len(b.Scores))
}

// MeanBatchBias is the average BatchBias over batches, the figure the paper
// reports (lower is better). Empty batches are skipped; it is NaN when no
// batch is left.
func MeanBatchBias(bs []BatchScores) float64 {
	var sum float64
	var n int
	for _, b := range bs {
		if v := BatchBias(b); !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Decomposition is the ensemble error decomposition of the BatchEval paper
// (Theorem 2), averaged over samples. For each sample with round scores S,
// their mean m and human score y:
//
//	(m - y)² = mean_r (s_r - y)² - mean_r (s_r - m)²
//
// so the ensemble is better than a typical round by exactly the spread of
// the rounds. The figures only mean something when judge and human scores
// are on the same scale; convert first.
type Decomposition struct {
	// EnsembleErr is the mean over samples of (m - y)².
	EnsembleErr float64
	// MeanRoundErr is the mean over samples of mean_r (s_r - y)².
	MeanRoundErr float64
	// MeanVariance is the mean over samples of the population variance of
	// the round scores (divisor = number of rounds, as in the theorem).
	MeanVariance float64
	// N is the number of samples used.
	N int
}

// Decompose computes the Decomposition. rounds[i] holds sample i's scores
// over the rounds, missing ones already removed; human[i] is its human
// score. Samples with no round score or a non-finite human score are
// skipped; non-finite round scores are dropped. All three figures are NaN
// when no sample is left. It panics if rounds and human differ in length.
func Decompose(rounds [][]float64, human []float64) Decomposition {
	mustSameLen(len(rounds), len(human))
	var d Decomposition
	for i, raw := range rounds {
		s := finiteValues(raw)
		y := human[i]
		if len(s) == 0 || !finite(y) {
			continue
		}
		m := Mean(s)
		var errSum, varSum float64
		for _, v := range s {
			errSum += (v - y) * (v - y)
			varSum += (v - m) * (v - m)
		}
		k := float64(len(s))
		d.EnsembleErr += (m - y) * (m - y)
		d.MeanRoundErr += errSum / k
		d.MeanVariance += varSum / k
		d.N++
	}
	if d.N == 0 {
		nan := math.NaN()
		return Decomposition{EnsembleErr: nan, MeanRoundErr: nan, MeanVariance: nan}
	}
	n := float64(d.N)
	d.EnsembleErr /= n
	d.MeanRoundErr /= n
	d.MeanVariance /= n
	return d
}
