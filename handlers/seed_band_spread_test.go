package handlers

import (
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// TestSeedBandSpreadReadsAsItsBounds: the experiment page's seed band
// printed its spread as the unrounded max − min rounded, beside bounds
// rounded each on its own, so a reader subtracting the printed bounds got
// another number ("0.100 to 0.102 (spread 0.001)"). Every band's spread
// must now be exactly the difference of its printed bounds and, within
// half a unit of its last decimal, the seeds' true max − min; the bounds
// take the decimals that need. The headline's "spread across seeds"
// quotes the widest band's printed spread.
func TestSeedBandSpreadReadsAsItsBounds(t *testing.T) {
	run := func(id int64, name string) models.Run {
		return models.Run{ID: id, Name: name, Status: models.RunSucceeded}
	}
	bandRE := regexp.MustCompile(`^Setup over 3 seeds: average Pearson (\S+) to (\S+) \(spread (\S+)\)$`)
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(strings.ReplaceAll(s, "−", "-"))
		if !ok {
			t.Fatalf("%q is not a number", s)
		}
		return r
	}
	for _, tt := range []struct {
		name     string
		min, max float64
		band     string // the whole band as printed
	}{
		// Disagreed on the old code: rounded bounds 0.100 to 0.102, spread 0.001.
		{"upper bound rounds up, spread down", 0.1004, 0.1016, "Setup over 3 seeds: average Pearson 0.1004 to 0.1016 (spread 0.0012)"},
		// Old: 0.611 to 0.701 (spread 0.089).
		{"both bounds round up", 0.6114, 0.7006, "Setup over 3 seeds: average Pearson 0.6114 to 0.7006 (spread 0.0892)"},
		// Old: −0.052 to 0.031 (spread 0.084).
		{"across zero", -0.0524, 0.0314, "Setup over 3 seeds: average Pearson −0.0524 to 0.0314 (spread 0.0838)"},
		// Old: 0.7000 to 0.7002 (spread 0.0001).
		{"small spread", 0.70004, 0.70016, "Setup over 3 seeds: average Pearson 0.70004 to 0.70016 (spread 0.00012)"},
		// Agreed already: three decimals stay.
		{"usual spread", 0.61, 0.7, "Setup over 3 seeds: average Pearson 0.610 to 0.700 (spread 0.090)"},
		{"usual spread, ragged values", 0.6123, 0.7041, "Setup over 3 seeds: average Pearson 0.612 to 0.704 (spread 0.092)"},
		{"tiny spread", 0.7, 0.7002, "Setup over 3 seeds: average Pearson 0.7000 to 0.7002 (spread 0.0002)"},
		// Bounds alike to six decimals: no made-up spread.
		{"below six decimals", 0.1000001, 0.1000003, "Setup over 3 seeds: average Pearson 0.100000 in every run to six decimals (spread below 0.000001)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := verdictOf(nil, []repeatBand{{parent: run(1, "Setup"), runs: 3, min: tt.min, max: tt.max}})
			if len(v.Bands) != 1 || v.Bands[0] != tt.band {
				t.Fatalf("band %q, want %q", v.Bands, tt.band)
			}
			m := bandRE.FindStringSubmatch(v.Bands[0])
			if m == nil {
				return // worded, not a range
			}
			lo, hi, spread := rat(m[1]), rat(m[2]), rat(m[3])
			if diff := new(big.Rat).Sub(hi, lo); diff.Cmp(spread) != 0 {
				t.Errorf("%s − %s is %s, the band's spread reads %s", m[2], m[1], diff.FloatString(8), m[3])
			}
			digits := len(m[3]) - strings.IndexByte(m[3], '.') - 1
			if got, _ := spread.Float64(); math.Abs(got-(tt.max-tt.min)) > 0.5*math.Pow(10, -float64(digits))+1e-12 {
				t.Errorf("spread %s, the seeds' max − min is %v", m[3], tt.max-tt.min)
			}
		})
	}

	// The headline's spread across seeds is the widest band's, as printed.
	best := contender{fig: runFigures{run: run(2, "A"), avgP: 0.42}}
	test := stats.AveragedDifference{A: 0.42, B: 0.3, Diff: 0.12, CILow: 0.05, CIHigh: 0.2, P: 0.001}
	other := contender{fig: runFigures{run: run(3, "B"), avgP: 0.3}, test: test, adjP: test.P}
	bands := []repeatBand{
		{parent: run(2, "A"), runs: 3, min: 0.6114, max: 0.7006},
		{parent: run(3, "B"), runs: 2, min: 0.3, max: 0.31},
	}
	v := verdictOf([]contender{best, other}, bands)
	if want := "larger than the spread across seeds (0.0892)"; !strings.Contains(v.Text, want) {
		t.Errorf("headline %q, want it to hold %q", v.Text, want)
	}
	test.Diff = 0.05
	other.test = test
	v = verdictOf([]contender{best, other}, bands)
	if want := "smaller than the spread across seeds (0.0892)"; !strings.Contains(v.Text, want) {
		t.Errorf("headline %q, want it to hold %q", v.Text, want)
	}
}
