package stats

import "math"

// Spread describes how a figure (a correlation, a mean score, a cost)
// varies over repeated runs of the same evaluation: its repeatability.
type Spread struct {
	// N is the number of finite values.
	N int
	// Mean is their mean; NaN when N == 0.
	Mean float64
	// SD is the sample standard deviation (n-1 divisor, since the runs
	// are a sample of the runs one could make); NaN when N < 2.
	SD float64
	// Min and Max bound the values; NaN when N == 0.
	Min, Max float64
}

// SpreadOf summarises values, one per run. Non-finite values (a run whose
// figure was undefined) are left out and not counted in N.
func SpreadOf(values []float64) Spread {
	s := Describe(values)
	return Spread{N: s.N, Mean: s.Mean, SD: s.SD, Min: s.Min, Max: s.Max}
}

// Rescale maps v linearly from the scale [fromLo, fromHi] to [toLo, toHi],
// so judge and human scores can be compared directly (errors, bias,
// ensemble decomposition); e.g. Rescale(2, 1, 3, 1, 5) = 3. Values outside
// the source scale map outside the target scale: nothing is clamped, so a
// parsing bug stays visible. A reversed target (toLo > toHi) flips the
// scale. It is NaN when the source scale is empty (fromLo == fromHi) or
// any argument is not finite.
func Rescale(v, fromLo, fromHi, toLo, toHi float64) float64 {
	if !finite(v) || !finite(fromLo) || !finite(fromHi) || !finite(toLo) || !finite(toHi) || fromLo == fromHi {
		return math.NaN()
	}
	return toLo + (v-fromLo)*(toHi-toLo)/(fromHi-fromLo)
}
