package stats

import (
	"math"
	"slices"
	"strings"
)

// Grouped is a correlation computed separately inside each group of
// samples and then averaged, such as SummEval's "summary-level"
// correlation (per source document) or a per-dialogue-context correlation
// on Topical-Chat. It answers "does the judge order the candidates for the
// same input the way humans do?", which a correlation pooled over all
// samples can overstate when some inputs are simply easier than others.
type Grouped struct {
	// Coef is the unweighted mean of the per-group coefficients, each
	// group counting once whatever its size, as SummEval averages over
	// documents. NaN when no group has a defined coefficient.
	Coef float64
	// Groups is the number of groups whose coefficient is defined.
	Groups int
	// Skipped is the number of groups left out because their coefficient
	// is undefined: fewer than three complete pairs, or one side constant
	// inside the group (common when humans give every candidate of a
	// context the same rating).
	Skipped int
	// N is the number of complete pairs inside the groups that were used.
	N int
	// Ungrouped is the number of complete pairs left out because their
	// group value is empty (or only whitespace): a sample that names no
	// group belongs to none, rather than to one group of all such samples.
	Ungrouped int
}

// GroupedCorrelation computes the coefficient named by m between x and y
// inside each group (samples with equal groups[i]) and averages the
// defined ones. Pairs where either value is not finite are left out
// before the groups are measured, so a group with two complete pairs is
// skipped. Per-group p-values are not combined: the groups are small and
// a mean of p-values has no meaning; use the pooled Correlate for
// significance. A sample whose group value is empty or only whitespace
// belongs to no group: it is left out, and counted in Ungrouped when its
// pair is complete. An unknown method skips every group.
// It panics if x, y and groups differ in length.
func GroupedCorrelation(m Method, x, y []float64, groups []string) Grouped {
	mustSameLen(len(x), len(y))
	mustSameLen(len(x), len(groups))
	type series struct{ xs, ys []float64 }
	// Groups are visited in sorted order of their names so that the
	// floating-point sum, and hence Coef, depends neither on map order nor
	// on the order the samples were listed in.
	var order []string
	byGroup := map[string]*series{}
	ungrouped := 0
	for i, g := range groups {
		if strings.TrimSpace(g) == "" {
			if finite(x[i]) && finite(y[i]) {
				ungrouped++
			}
			continue
		}
		s, ok := byGroup[g]
		if !ok {
			s = &series{}
			byGroup[g] = s
			order = append(order, g)
		}
		if finite(x[i]) && finite(y[i]) {
			s.xs = append(s.xs, x[i])
			s.ys = append(s.ys, y[i])
		}
	}
	slices.Sort(order)
	out := Grouped{Coef: math.NaN(), Ungrouped: ungrouped}
	var sum float64
	for _, g := range order {
		s := byGroup[g]
		r := math.NaN()
		if m.Valid() {
			r = coefficient(m, s.xs, s.ys)
		}
		if math.IsNaN(r) {
			out.Skipped++
			continue
		}
		sum += r
		out.Groups++
		out.N += len(s.xs)
	}
	if out.Groups > 0 {
		out.Coef = sum / float64(out.Groups)
	}
	return out
}
