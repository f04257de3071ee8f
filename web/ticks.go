package web

import (
	"math"
	"strconv"
)

// NiceTicks returns the values to mark on a chart axis covering lo to hi:
// multiples of a step of 1, 2 or 5 times a power of ten (so 0, 500, 1000,
// never 1004, 2008), at most maxTicks of them (at least 2), the first at or
// below lo and the last at or above hi. The axis should span the first to
// the last tick, so no value falls outside and the end labels sit on the
// axis's ends. Invalid input (NaN, infinities) gives 0 and 1.
func NiceTicks(lo, hi float64, maxTicks int) []float64 {
	maxTicks = max(maxTicks, 2)
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return []float64{0, 1}
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		// One value: a unit around it, on its own order of magnitude.
		pad := 1.0
		if lo != 0 {
			pad = math.Pow(10, math.Floor(math.Log10(math.Abs(lo))))
		}
		lo, hi = lo-pad, hi+pad
	}
	step := niceStep(lo, hi, maxTicks)
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	out := make([]float64, 0, int(last-first)+1)
	for k := first; k <= last; k++ {
		v := k * step
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, roundTo(v, step))
	}
	return out
}

// niceStep is the smallest step of 1, 2 or 5 × 10^k whose ticks from lo to
// hi number at most maxTicks.
func niceStep(lo, hi float64, maxTicks int) float64 {
	raw := (hi - lo) / float64(maxTicks-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10, 20} {
		step := m * mag
		n := math.Ceil(hi/step-1e-9) - math.Floor(lo/step+1e-9) + 1
		if int(n) <= maxTicks {
			return step
		}
	}
	return 50 * mag
}

// roundTo removes the floating-point noise of k × step (0.30000000000000004).
func roundTo(v, step float64) float64 {
	d := tickDecimals(step)
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', d, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// tickDecimals is how many decimals ticks of this step need (0.05: 2).
func tickDecimals(step float64) int {
	if step <= 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		return 0
	}
	// The step is 1, 2 or 5 × 10^k: its decimals are -k, or one fewer for
	// none of them (5 × 10^-2 needs two).
	return max(0, int(-math.Floor(math.Log10(step)+1e-9)))
}

// TickLabels writes ticks with the decimals their step needs, all alike
// ("0.00", "0.05", "0.10"), and thousands separated ("2,500").
func TickLabels(ticks []float64) []string {
	step := 1.0
	if len(ticks) > 1 {
		step = ticks[1] - ticks[0]
	}
	d := tickDecimals(step)
	out := make([]string, len(ticks))
	for i, v := range ticks {
		out[i] = groupThousands(strconv.FormatFloat(v, 'f', d, 64))
	}
	return out
}

// groupThousands puts commas between groups of three digits of the whole
// part of a formatted number.
func groupThousands(s string) string {
	sign := ""
	if len(s) > 0 && s[0] == '-' {
		sign, s = Minus("-"), s[1:]
	}
	whole, frac := s, ""
	for i := range s {
		if s[i] == '.' {
			whole, frac = s[:i], s[i:]
			break
		}
	}
	var b []byte
	for i := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, whole[i])
	}
	return sign + string(b) + frac
}
