package handlers

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/web"
)

// TestCompareBoundsShowTheirSide: the compare page (its table and its
// sentence, the API's reading) and the alignment page printed a bound of
// A − B's 95% interval within half a thousandth of 0 as "±0.000", which
// reads as a margin and hides on which side of no difference the bound
// lies; and the sentence read such a bound as 0, so a lower bound of
// +0.0003 was called "includes no difference" (or "cannot tell apart").
// Bounds are now written as the experiment page writes them
// (web.IntervalBound) and the sentence reads them as printed. Fails on
// the old code (±0.000 in every near-zero case; wrong sentence).
func TestCompareBoundsShowTheirSide(t *testing.T) {
	pearson := func(diff, lo, hi, p float64) stats.Difference {
		return stats.Difference{Method: stats.MethodPearson, A: 0.5 + diff/2, B: 0.5 - diff/2, Diff: diff, CILow: lo, CIHigh: hi,
			Tests: []stats.PairedTest{{Name: "Williams' t", P: p}, {Name: "Steiger's z", P: p}}}
	}
	for _, tt := range []struct {
		name     string
		d        stats.Difference
		interval string   // as the table (and the alignment page) writes it
		say, not []string // in the sentence
	}{
		{"low bound just above 0, significant", pearson(0.09, 0.0003, 0.18, 0.04), "+0.0003 to +0.180",
			[]string{"Run A agrees better with the humans than Run B", "95% interval +0.0003 to +0.180"},
			[]string{"includes no difference", "borderline", "±"}},
		{"low bound just above 0, not significant", pearson(0.09, 0.0003, 0.18, 0.06), "+0.0003 to +0.180",
			[]string{"does not find a difference", "+0.0003 to +0.180, lies entirely on one side of 0"},
			[]string{"cannot tell", "±"}},
		{"low bound just below 0, significant", pearson(0.09, -0.00004, 0.18, 0.04), "−0.00004 to +0.180",
			[]string{"still includes no difference", "−0.00004 to +0.180"},
			[]string{"cannot tell", "±"}},
		{"high bound just below 0, not significant", pearson(-0.09, -0.18, -0.0004, 0.06), "−0.180 to −0.0004",
			[]string{"lies entirely on one side of 0", "−0.180 to −0.0004"},
			[]string{"cannot tell", "±"}},
		{"high bound 0 up to float noise", pearson(-0.09, -0.18, 1e-17, 0.06), "−0.180 to 0.000",
			[]string{"cannot tell the two runs apart", "95% interval −0.180 to 0.000"},
			[]string{"±", "borderline"}},
		{"bounds clear of 0", pearson(0.09, 0.012, 0.18, 0.01), "+0.012 to +0.180",
			[]string{"Run A agrees better", "95% interval +0.012 to +0.180"},
			[]string{"borderline"}},
		{"no interval", pearson(0.09, math.NaN(), math.NaN(), 0.01), "undefined",
			[]string{"could not be computed"}, []string{"±"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := web.DifferenceInterval(tt.d.CILow, tt.d.CIHigh); got != tt.interval {
				t.Errorf("table writes %q, want %q", got, tt.interval)
			}
			if got := web.AlignIntervalText(tt.d.CILow, tt.d.CIHigh); got != tt.interval {
				t.Errorf("alignment page writes %q, want %q", got, tt.interval)
			}
			got := signedAsOnPages(agreementReading([]stats.Difference{tt.d}, "Run A", "Run B"))
			for _, w := range tt.say {
				if !strings.Contains(got, w) {
					t.Errorf("reading %q lacks %q", got, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("reading %q says %q", got, w)
				}
			}
		})
	}

	// The same through storage, the page and the API on both databases: two
	// runs whose Pearson difference has a lower bound between 0 and 0.0005
	// (found by bisection over how much noise run B's scores carry).
	const n = 120
	h, a, nA, nB := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	x := uint64(20251206)
	next := func() float64 { // a small fixed LCG: the same data on every run
		x = x*6364136223846793005 + 1442695040888963407
		return float64(x>>11)/float64(1<<53)*2 - 1
	}
	for i := range n {
		h[i] = float64(1 + i%5)
		nA[i], nB[i] = next(), next()
		a[i] = 3 + 0.4*(h[i]-3) + 0.6*nA[i]
	}
	bWith := func(w float64) []float64 {
		b := make([]float64, n)
		for i := range b {
			b[i] = 3 + 0.4*(h[i]-3) + w*nB[i]
		}
		return b
	}
	lowAt := func(w float64) float64 {
		return stats.CompareCorrelations(stats.MethodPearson, a, bWith(w), h, 0, 0).CILow
	}
	lo, hi := 0.3, 1.0
	if !(lowAt(lo) < 0 && lowAt(hi) > 0) {
		t.Fatalf("the bracket does not straddle 0: %v, %v", lowAt(lo), lowAt(hi))
	}
	w := hi
	for range 200 {
		w = (lo + hi) / 2
		l := lowAt(w)
		if l > 0.00005 && l < 0.00045 {
			break
		}
		if l < 0 {
			lo = w
		} else {
			hi = w
		}
	}
	b := bWith(w)
	want := stats.CompareCorrelations(stats.MethodPearson, a, b, h, 0, 0)
	if !(want.CILow > 0 && want.CILow < 0.0005) {
		t.Fatalf("no lower bound near 0 found: %v", want.CILow)
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDatasetOf("Near zero", h)
		runA := env.storedRounds(d, "Run A", [][]float64{a})
		runB := env.storedRounds(d, "Run B", [][]float64{b})
		path := fmt.Sprintf("compare?a=%d&b=%d&criterion=0", runA.ID, runB.ID)
		page := env.get("/" + path).Body.String()
		row := regexp.MustCompile(`(?s)data-testid="agreement-pearson".*?</tr>`).FindString(page)
		cell := regexp.MustCompile(`data-testid="agreement-ci"[^>]*>([^<]*)<`).FindStringSubmatch(row)
		wantCell := web.DifferenceInterval(want.CILow, want.CIHigh)
		if cell == nil || html.UnescapeString(cell[1]) != wantCell || !strings.HasPrefix(wantCell, "+0.000") {
			t.Errorf("the page's Pearson interval is %q, want %q (a bound above 0 shown as such)", cell, wantCell)
		}
		reading := regexp.MustCompile(`data-testid="agreement-reading">([^<]*)<`).FindStringSubmatch(page)
		if reading == nil {
			t.Fatalf("the page has no reading")
		}
		text := html.UnescapeString(reading[1])
		if !strings.Contains(text, web.IntervalBound(want.CILow)) || strings.Contains(text, "±") ||
			strings.Contains(text, "includes no difference") || strings.Contains(text, "cannot tell") {
			t.Errorf("the page reads %q: it should print the lower bound %s and not call the interval one that includes 0", text, web.IntervalBound(want.CILow))
		}
		rec := env.get("/api/v1/" + path)
		if rec.Code != http.StatusOK {
			t.Fatalf("API: %d %.300s", rec.Code, rec.Body)
		}
		var api struct {
			Agreement struct {
				Reading     string `json:"reading"`
				Differences []struct {
					Method string  `json:"method"`
					CILow  float64 `json:"ci_low"`
				} `json:"differences"`
			} `json:"agreement"`
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &api))
		if signedAsOnPages(api.Agreement.Reading) != text {
			t.Errorf("the API reads %q, the page %q", api.Agreement.Reading, text)
		}
		for _, ad := range api.Agreement.Differences {
			if ad.Method == "pearson" && ad.CILow != want.CILow {
				t.Errorf("the API's ci_low %v, recomputed %v", ad.CILow, want.CILow)
			}
		}
	})
}
