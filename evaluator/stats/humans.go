package stats

import "math"

// Human ratings usually come as a matrix: ratings[i][a] is annotator a's
// rating of item i, NaN (or any non-finite value) where a did not rate i.
// Rows may be shorter than the number of annotators; the missing tail
// counts as not rated.

// RatingsMatrix turns long-form ratings (one row per item and annotator,
// as datasets with several annotators per sample are usually stored) into
// a ratings matrix. items and annotators list the distinct IDs in order
// of first appearance, and ratings[i][a] is annotators[a]'s rating of
// items[i]. An item or annotator whose every value is non-finite still
// gets its row or column (all NaN), so the item list stays aligned with
// the dataset. If an annotator rated the same item more than once, the
// ratings are averaged: keeping only one would silently depend on row
// order, and counting them as two annotators would inflate agreement.
// It panics if the three slices differ in length.
func RatingsMatrix(itemIDs []string, annotatorIDs []string, values []float64) (items []string, annotators []string, ratings [][]float64) {
	mustSameLen(len(itemIDs), len(annotatorIDs))
	mustSameLen(len(itemIDs), len(values))
	itemIdx := map[string]int{}
	annIdx := map[string]int{}
	type cell struct{ i, a int }
	sums := map[cell]float64{}
	counts := map[cell]int{}
	for k := range values {
		i, ok := itemIdx[itemIDs[k]]
		if !ok {
			i = len(items)
			itemIdx[itemIDs[k]] = i
			items = append(items, itemIDs[k])
		}
		a, ok := annIdx[annotatorIDs[k]]
		if !ok {
			a = len(annotators)
			annIdx[annotatorIDs[k]] = a
			annotators = append(annotators, annotatorIDs[k])
		}
		if finite(values[k]) {
			sums[cell{i, a}] += values[k]
			counts[cell{i, a}]++
		}
	}
	ratings = make([][]float64, len(items))
	for i := range ratings {
		row := make([]float64, len(annotators))
		for a := range row {
			row[a] = math.NaN()
			if c := counts[cell{i, a}]; c > 0 {
				row[a] = sums[cell{i, a}] / float64(c)
			}
		}
		ratings[i] = row
	}
	return items, annotators, ratings
}

// MeanRatings is the mean of each item's finite ratings, the usual
// "human score" of a sample; NaN for an item nobody rated.
func MeanRatings(ratings [][]float64) []float64 {
	out := make([]float64, len(ratings))
	for i, row := range ratings {
		out[i] = Mean(finiteValues(row))
	}
	return out
}

// KrippendorffAlphaInterval is Krippendorff's alpha with the interval
// metric (squared difference), the agreement among annotators beyond what
// chance would give: 1 is perfect agreement, 0 is chance level, below 0
// systematic disagreement. It follows Krippendorff, "Computing
// Krippendorff's Alpha-Reliability" (2011): only pairable values count,
// so items with fewer than two ratings are dropped, and
//
//	alpha = 1 - D_o / D_e
//	D_o = 1/n · Σ_items 1/(m_u - 1) · Σ_{i≠j in item} (v_i - v_j)²
//	D_e = 1/(n(n-1)) · Σ_{i≠j over all pairable values} (v_i - v_j)²
//
// with m_u the ratings of item u and n the pairable values in all. For
// the squared difference, the sum over ordered pairs of k values equals
// 2k times their sum of squared deviations from their mean, which is how
// it is computed here (one pass instead of all pairs).
// It is NaN when no item has two ratings or when every pairable value is
// the same (D_e = 0: there is no variation to agree on).
func KrippendorffAlphaInterval(ratings [][]float64) float64 {
	var (
		n        int     // pairable values
		within   float64 // Σ_u 2·m_u·SS_u/(m_u-1), i.e. n·D_o
		pairable []float64
	)
	for _, row := range ratings {
		vals := finiteValues(row)
		m := len(vals)
		if m < 2 {
			continue
		}
		within += 2 * float64(m) * sumSquaredDeviations(vals) / float64(m-1)
		n += m
		pairable = append(pairable, vals...)
	}
	if n < 2 {
		return math.NaN()
	}
	do := within / float64(n)
	de := 2 * float64(n) * sumSquaredDeviations(pairable) / (float64(n) * float64(n-1))
	if de == 0 {
		return math.NaN()
	}
	return 1 - do/de
}

// sumSquaredDeviations is Σ (v - mean)², computed from the mean rather
// than as Σv² - n·mean², which loses precision when values are large
// compared with their spread.
func sumSquaredDeviations(vs []float64) float64 {
	m := Mean(vs)
	var ss float64
	for _, v := range vs {
		ss += (v - m) * (v - m)
	}
	return ss
}

// LeaveOneOutCorrelation measures how well one human agrees with the
// others, the usual "human ceiling" for a judge: for each annotator a it
// correlates a's ratings with the mean of the other annotators' ratings,
// on the items where a rated and at least one other annotator did.
// perAnnotator[a] is that coefficient (NaN when undefined: fewer than
// three such items, or a constant series); mean is the average over the
// annotators whose coefficient is defined, NaN when none is. The number
// of annotators is the length of the longest row.
//
// The judge is normally correlated with the mean of all annotators, a
// slightly less noisy target than the mean of all but one, so this
// ceiling is a little conservative: a judge that merely matches it is
// already doing as well as a single human.
func LeaveOneOutCorrelation(m Method, ratings [][]float64) (mean float64, perAnnotator []float64) {
	annotators := 0
	for _, row := range ratings {
		annotators = max(annotators, len(row))
	}
	perAnnotator = make([]float64, annotators)
	var sum float64
	var defined int
	for a := range annotators {
		var own, others []float64
		for _, row := range ratings {
			if a >= len(row) || !finite(row[a]) {
				continue
			}
			var s float64
			var k int
			for b, v := range row {
				if b != a && finite(v) {
					s += v
					k++
				}
			}
			if k == 0 {
				continue
			}
			own = append(own, row[a])
			others = append(others, s/float64(k))
		}
		r := math.NaN()
		if m.Valid() {
			r = coefficient(m, own, others)
		}
		perAnnotator[a] = r
		if !math.IsNaN(r) {
			sum += r
			defined++
		}
	}
	if defined == 0 {
		return math.NaN(), perAnnotator
	}
	return sum / float64(defined), perAnnotator
}
