package handlers

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// heldOutIntervalOracle recomputes the alignment page's 95% interval of a
// held-out difference (after − before in agreement with the humans h),
// sharing no code with evaluator/stats. Pearson r: Zou's (2007) interval
// for two correlations with the humans sharing them, from each
// coefficient's Fisher interval and the correlation of the two versions'
// scores (a single point when both scored every sample alike). Spearman ρ and Kendall τ-b: the paired percentile bootstrap as
// the stats package documents it (samples in the order of h, then after,
// then before; draws with replacement from PCG(seed, "pairedb"); the
// difference of the two coefficients on each draw, draws where either is
// undefined left out; numpy's default, type 7, quantiles), over draws
// resamples. It also returns how many draws were used.
func heldOutIntervalOracle(method string, after, before, h []float64, draws int, seed uint64) (lo, hi float64, used int) {
	n := len(h)
	if method == "pearson" {
		ra, rb, rab := textbookPearson(after, h), textbookPearson(before, h), textbookPearson(after, before)
		if n < 4 {
			return math.NaN(), math.NaN(), 0
		}
		// Two versions that scored every sample alike differ by exactly
		// ra − rb on any data: Zou's formula, whose Fisher intervals are
		// not symmetric, would still give it a width (±0.025 on 30 FED
		// samples), which no resample could show.
		if slices.Equal(after, before) {
			return ra - rb, ra - rb, 0
		}
		w := 1.959963984540054 / math.Sqrt(float64(n-3))
		fisher := func(r float64) (float64, float64) { return math.Tanh(math.Atanh(r) - w), math.Tanh(math.Atanh(r) + w) }
		la, ua := fisher(ra)
		lb, ub := fisher(rb)
		// The correlation between the two coefficients' estimates when
		// they share the humans (Zou's eq. for overlapping correlations).
		corr := ((rab-ra*rb/2)*(1-ra*ra-rb*rb-rab*rab) + rab*rab*rab) / ((1 - ra*ra) * (1 - rb*rb))
		dl := (ra-la)*(ra-la) + (ub-rb)*(ub-rb) - 2*corr*(ra-la)*(ub-rb)
		du := (ua-ra)*(ua-ra) + (rb-lb)*(rb-lb) - 2*corr*(ua-ra)*(rb-lb)
		return ra - rb - math.Sqrt(math.Max(dl, 0)), ra - rb + math.Sqrt(math.Max(du, 0)), 0
	}
	coef := textbookTauB
	if method == "spearman" {
		coef = func(x, y []float64) float64 { return textbookPearson(averageRanks(x), averageRanks(y)) }
	}
	type sample struct{ a, b, h float64 }
	ss := make([]sample, n)
	for i := range ss {
		ss[i] = sample{after[i], before[i], h[i]}
	}
	slices.SortFunc(ss, func(x, y sample) int {
		return cmp.Or(cmp.Compare(x.h, y.h), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	rng := rand.New(rand.NewPCG(seed, 0x70616972656462)) // "pairedb"
	xa, xb, xh := make([]float64, n), make([]float64, n), make([]float64, n)
	var diffs []float64
	for range draws {
		for i := range n {
			s := ss[rng.IntN(n)]
			xa[i], xb[i], xh[i] = s.a, s.b, s.h
		}
		ca, cb := coef(xa, xh), coef(xb, xh)
		if !math.IsNaN(ca) && !math.IsNaN(cb) {
			diffs = append(diffs, ca-cb)
		}
	}
	if len(diffs) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	slices.Sort(diffs)
	q := func(p float64) float64 {
		at := p * float64(len(diffs)-1)
		k := int(at)
		if k+1 >= len(diffs) {
			return diffs[k]
		}
		return diffs[k] + (at-float64(k))*(diffs[k+1]-diffs[k])
	}
	return q(0.025), q(0.975), len(diffs)
}

// TestHeldOutComparisonsMatchOracleOnFED: the alignment page's held-out
// before/after figures (heldOutComparisons, what the page shows) for two
// versions of a judge that differ, taken from FED's real ratings: the
// Likeable and Understanding ratings of the first n dialogues as the
// before and after versions' scores, the Overall rating as the humans',
// with a missing score on either side in some rows. Every coefficient,
// the difference and its 95% interval equal the independent recomputation
// (textbook coefficients, heldOutIntervalOracle) to 1e-12, and the page's
// interval text is those bounds rounded, with how many resamples the
// bootstrap's is from when some were left out (the first 6). (The end-to-end test,
// TestAlignmentPageFiguresRecomputed, has a simulated judge that scores
// both versions alike, so its differences are all zero.)
func TestHeldOutComparisonsMatchOracleOnFED(t *testing.T) {
	fed := readFED(t, 125)
	tests := []struct {
		name          string
		n             int
		before, after string
		seed          int64
		// missing drops the after version's score of every k-th sample.
		missing int
	}{
		{"likeable then understanding, 125", 125, "Likeable", "Understanding", 5, 0},
		{"understanding then likeable, 60", 60, "Understanding", "Likeable", 11, 0},
		{"coherent then flexible, 30, some missing", 30, "Coherent", "Flexible", 3, 7},
		// Few enough that some resamples hold one rating only.
		{"likeable then understanding, 6", 6, "Likeable", "Understanding", 20240102, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after []models.SampleScore
			var xb, xa, ys []float64
			for i, r := range fed[:tt.n] {
				b, a, h := r.Scores[tt.before], r.Scores[tt.after], r.Scores["Overall"]
				before = append(before, models.SampleScore{RowID: int64(i + 1), ExternalID: r.ID, Final: &b, Human: &h})
				s := models.SampleScore{RowID: int64(i + 1), ExternalID: r.ID, Final: &a, Human: &h}
				if tt.missing > 0 && i%tt.missing == 0 {
					s.Final = nil
				} else {
					xb, xa, ys = append(xb, b), append(xa, a), append(ys, h)
				}
				after = append(after, s)
			}
			spearman := func(x, y []float64) float64 { return textbookPearson(averageRanks(x), averageRanks(y)) }
			coefs := map[stats.Method]func(x, y []float64) float64{stats.MethodPearson: textbookPearson, stats.MethodSpearman: spearman, stats.MethodKendall: textbookTauB}
			got := heldOutComparisons(models.Alignment{Seed: tt.seed}, before, after)
			if len(got) != 3 {
				t.Fatalf("%d comparisons, want 3", len(got))
			}
			for _, c := range got {
				d := c.Difference
				rb, ra := coefs[c.Method](xb, ys), coefs[c.Method](xa, ys)
				lo, hi, used := heldOutIntervalOracle(string(c.Method), xa, xb, ys, 1000, uint64(tt.seed))
				for _, f := range []struct {
					what      string
					got, want float64
				}{{"before", d.B, rb}, {"after", d.A, ra}, {"after − before", d.Diff, ra - rb}, {"95% low", d.CILow, lo}, {"95% high", d.CIHigh, hi}} {
					if math.IsNaN(f.want) || math.Abs(f.got-f.want) > 1e-12 {
						t.Errorf("%s %s: the page's figure %.15g, recomputed %.15g", c.Method, f.what, f.got, f.want)
					}
				}
				if d.N != len(ys) || d.Missing != tt.n-len(ys) {
					t.Errorf("%s: n %d, missing %d; recomputed %d, %d", c.Method, d.N, d.Missing, len(ys), tt.n-len(ys))
				}
				if want := fmt.Sprintf("%s to %s", readerRounds(lo, 3, true), readerRounds(hi, 3, true)); web.AlignIntervalText(d.CILow, d.CIHigh) != want {
					t.Errorf("%s: the page writes the interval %q, the recomputed bounds rounded are %q", c.Method, web.AlignIntervalText(d.CILow, d.CIHigh), want)
				}
				// The page says how many resamples the interval is from
				// when some were left out (web.ResamplesNote).
				wantNote := ""
				if used > 0 && used < 1000 {
					wantNote = fmt.Sprintf("from %d of 1000 resamples", used)
				}
				if note := web.ResamplesNote(d); note != wantNote || (c.Method != stats.MethodPearson && d.ResamplesUsed != used) {
					t.Errorf("%s: interval from %d of %d resamples (%q); recomputed %d of 1000 (%q)", c.Method, d.ResamplesUsed, d.Resamples, note, used, wantNote)
				}
				t.Logf("%s: before %.3f after %.3f diff %.3f [%.3f, %.3f] (bootstrap draws used: %d)", c.Method, rb, ra, ra-rb, lo, hi, used)
			}
		})
	}
}
