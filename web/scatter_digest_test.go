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
// grid, and sampled.
func TestScatterFromDigestIsTheSameChart(t *testing.T) {
	before := map[string]string{
		"40-false":   "44f7fe797d1017e28adea18f41097dd955609ca86fc95f13848bae58853d64a7",
		"40-true":    "58446ccb775eaf6c568ac151f77bc2b90e4cd184409123e836f9e3d9e3de4862",
		"500-false":  "b315d7ee6c5438b89d03e5902928d0370b94cd28cd8a26f00a9b7d004f2dc59d",
		"500-true":   "bface8fe355329ba004d44b79378d2f66404262318ad3df712e85ed6556765b6",
		"5000-false": "1ad7a5bd2f66f94dda96c8352b79e2efa24230b161f53f71b76d1f56a42bc70b",
		"5000-true":  "3bf5783c4076525cb10402623e5af7305a48f305d9f952ee6c1ed419721d3eda",
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
