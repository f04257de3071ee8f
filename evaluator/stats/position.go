package stats

import (
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
	type acc struct {
		n, nErr                int
		sum, sumAbs, sumSigned float64
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
		a.sum += scores[i]
		if human != nil && finite(human[i]) {
			e := scores[i] - human[i]
			a.nErr++
			a.sumAbs += math.Abs(e)
			a.sumSigned += e
		}
	}
	out := make([]PositionStat, 0, len(byPos))
	for p, a := range byPos {
		st := PositionStat{
			Position: p, N: a.n, MeanScore: a.sum / float64(a.n),
			MeanAbsErr: math.NaN(), MeanSignedErr: math.NaN(),
		}
		if a.nErr > 0 {
			st.MeanAbsErr = a.sumAbs / float64(a.nErr)
			st.MeanSignedErr = a.sumSigned / float64(a.nErr)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b PositionStat) int { return a.Position - b.Position })
	return out
}
