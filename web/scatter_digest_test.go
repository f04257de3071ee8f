package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/report"
)

// digestOf is sc as the run page now builds it: the report's digest of
// every point and only the drawn points.
func digestOf(sc ScatterChart) ScatterChart {
	xs, ys := make([]float64, len(sc.Points)), make([]float64, len(sc.Points))
	for i, p := range sc.Points {
		xs[i], ys[i] = p.X, p.Y
	}
	d := report.DigestScatter(xs, ys, sc.XLo, sc.XHi, func(i int) report.ScatterDot {
		return report.ScatterDot{RowID: int64(i), X: xs[i], Y: ys[i]}
	})
	out := sc
	out.Digest, out.Points = &d, nil
	for _, dot := range d.Drawn {
		p := sc.Points[dot.RowID]
		out.Points = append(out.Points, ScatterPoint{X: dot.X, Y: dot.Y, Href: p.Href, Title: p.Title})
	}
	return out
}

// TestScatterFromDigestIsTheSameChart: a scatter drawn from a digest (the
// stored form a finished run's page reads) is byte for byte the chart of
// all its points, and both are the chart this package drew before the
// digest existed (the hashes were taken from that version's output for
// the same points): continuous and binary ratings, listed, counted in a
// grid, and sampled. The hashes of the charts with a grid (500 and 5000
// points) were taken again when the grid began counting a score on a
// cell's edge in the cell it opens (stats.BinIndex): the points at x =
// 3.4 moved from "2.6 to 3.4" to "3.4 to 4.2", and nothing else changed
// (the two versions' pages differ only in those two columns' counts).
func TestScatterFromDigestIsTheSameChart(t *testing.T) {
	before := map[string]string{
		"40-false":   "44f7fe797d1017e28adea18f41097dd955609ca86fc95f13848bae58853d64a7",
		"40-true":    "58446ccb775eaf6c568ac151f77bc2b90e4cd184409123e836f9e3d9e3de4862",
		"500-false":  "98944a6b2ac6618484bf0d9a4847bce813d910771ebad715ec7dc2656fc6d906",
		"500-true":   "cfaf410b70ca40c7efd56ec7c5ccfd794aca8641524ee8d406cfeb79f91b204c",
		"5000-false": "bb2baab23108bd1758ee3c282e2d6be5ed64677c7fe9ff67c34587cac7936b34",
		"5000-true":  "bc78efa8483673c7ea2e4f335608654b234508a4bbbd8094f771686b205b70a1",
	}
	for _, n := range []int{40, 500, 5000} {
		for _, binary := range []bool{false, true} {
			name := strconv.Itoa(n) + "-" + strconv.FormatBool(binary)
			t.Run(name, func(t *testing.T) {
				sc := scatterOfN(n, binary)
				all := renderString(t, Scatter(sc))
				dig := renderString(t, Scatter(digestOf(sc)))
				if all != dig {
					t.Errorf("the chart from its digest differs from the chart of every point")
				}
				sum := sha256.Sum256([]byte(all))
				if got := hex.EncodeToString(sum[:]); got != before[name] {
					t.Errorf("the chart differs from the one drawn before the digest: sha256 %s", got)
				}
				if n > MaxScatterPoints && !strings.Contains(dig, fmt.Sprintf("Showing %s of %s points", runCount(MaxScatterPoints), runCount(n))) {
					t.Errorf("a sampled chart from a digest does not say so")
				}
			})
		}
	}
}
