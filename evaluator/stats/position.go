package stats

import (
	"maps"
	"math"
	"slices"
)

// PositionStat summarises the scores given at one position inside the
// batches: whether a judge scores the first sample of a batch higher or
// lower than the last, or errs more at some positions.
type PositionStat struct {
	// Position is the 1-based place of the sample in its batch's prompt.
	Position int
	// N is the number of finite scores at this position.
	N int
	// Rated is how many of them have a finite human value: the samples
	// the two error means are over (at most N).
	Rated int
	// MeanScore is the mean judge score at this position.
	MeanScore float64
	// MeanAbsErr is the mean |score - human| over the samples at this
	// position with both values; NaN without human scores.
	MeanAbsErr float64
	// MeanSignedErr is the mean (score - human) over the same samples:
	// positive when the judge scores above the humans at this position;
	// NaN without human scores.
	MeanSignedErr float64
}

// PositionEffect groups scores by the position their sample held in its
// batch and summarises each position, in increasing position order.
// positions[i], scores[i] and human[i] describe one scored sample in one
// round (a sample appears once per round). human may be nil; otherwise
// its values must be on the judge's scale already (see Rescale), since
// the errors are plain differences. Non-finite scores and positions
// below 1 are left out; a non-finite human value only leaves that sample
// out of the error means. Positions without any finite score are not
// listed. It panics if the non-nil slices differ in length.
func PositionEffect(positions []int, scores []float64, human []float64) []PositionStat {
	mustSameLen(len(positions), len(scores))
	if human != nil {
		mustSameLen(len(positions), len(human))
	}
	// Values are collected per position and summed in sorted order, so
	// the means do not depend on the order the scores were listed in.
	// A first pass counts each position's values so that the second
	// allocates them at their size: grown by appending, the slices of a
	// run of a million samples allocated about twice their size.
	type acc struct {
		n, rated                  int
		scores, absErr, signedErr []float64
	}
	byPos := map[int]*acc{}
	for i, p := range positions {
		if p < 1 || !finite(scores[i]) {
			continue
		}
		a := byPos[p]
		if a == nil {
			a = &acc{}
			byPos[p] = a
		}
		a.n++
		if human != nil && finite(human[i]) {
			a.rated++
		}
	}
	for _, a := range byPos {
		a.scores = make([]float64, 0, a.n)
		a.absErr, a.signedErr = make([]float64, 0, a.rated), make([]float64, 0, a.rated)
	}
	for i, p := range positions {
		if p < 1 || !finite(scores[i]) {
			continue
		}
		a := byPos[p]
		a.scores = append(a.scores, scores[i])
		if human != nil && finite(human[i]) {
			e := scores[i] - human[i]
			a.absErr = append(a.absErr, math.Abs(e))
			a.signedErr = append(a.signedErr, e)
		}
	}
	out := make([]PositionStat, 0, len(byPos))
	for _, p := range slices.Sorted(maps.Keys(byPos)) {
		a := byPos[p]
		st := PositionStat{
			Position: p, N: len(a.scores), MeanScore: sortedSum(a.scores) / float64(len(a.scores)),
			MeanAbsErr: math.NaN(), MeanSignedErr: math.NaN(),
		}
		st.Rated = len(a.absErr)
		if k := len(a.absErr); k > 0 {
			st.MeanAbsErr = sortedSum(a.absErr) / float64(k)
			st.MeanSignedErr = sortedSum(a.signedErr) / float64(k)
		}
		out = append(out, st)
	}
	return out
}

// orderFreeSum adds xs in ascending order, so the same values listed in
// any order give the same bits (floating-point addition is not
// associative). It does not change xs.
func orderFreeSum(xs []float64) float64 {
	return sortedSum(slices.Clone(xs))
}

// sortedSum is orderFreeSum sorting xs in place: for values collected to
// be summed (PositionEffect's, a run's every round score at once), not a
// second copy of them.
func sortedSum(xs []float64) float64 {
	slices.Sort(xs)
	var sum float64
	for _, v := range xs {
		sum += v
	}
	return sum
}
