package report

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestUSDRoundsForExport(t *testing.T) {
	noisy := noisyCost()
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"float noise", USD(noisy), "0.3"},
		{"micro-dollars kept", USD(0.001234), "0.001234"},
		{"below a micro-dollar", USD(0.0012344999), "0.001234"},
		{"whole dollars", USD(5), "5"},
		{"zero", USD(0), "0"},
		{"a tiny negative correction", USD(-1e-12), "0"},
		{"not a number", USD(math.NaN()), "null"},
		{"unknown", USDOf(nil), "null"},
		{"per sample keeps nano-dollars", USDPerSample(0.0000034567891), "0.000003457"},
		{"per sample noise", USDPerSample(noisy / 3), "0.1"},
		// Half-way at the sixth decimal: half away from zero, as the run
		// page's money (0.0001235 wrote 0.000123, its float lying just
		// below the half, beside the page's $0.000124).
		{"half a micro-dollar", USD(0.0001235), "0.000124"},
		{"half a micro-dollar, negative", USD(-0.0001235), "-0.000124"},
		{"just below half a micro-dollar", USD(0.00012349), "0.000123"},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s (%v), want %s", tc.name, b, err, tc.want)
		}
	}
}

// TestExportCostRounded: a stored cost with float noise is exported rounded
// to the micro-dollar, and two exports of the run are the same bytes.
func TestExportCostRounded(t *testing.T) {
	r := gevalFixture()
	cost := noisyCost()
	r.Run.CostUSD = &cost
	first, _ := exportJSON(t, r)
	second, _ := exportJSON(t, r)
	if !bytes.Contains(first, []byte(`"cost_usd": 0.3,`)) || bytes.Contains(first, []byte("0.30000000000000004")) {
		t.Errorf("export writes the cost with its float noise: %s", first[bytes.Index(first, []byte(`"cost_usd"`)):][:40])
	}
	if !bytes.Equal(first, second) {
		t.Errorf("two exports of one run differ")
	}
}

// noisyCost is 0.1 + 0.2 added at run time (a constant expression would be
// exact): 0.30000000000000004, as two calls' costs sum in the database.
func noisyCost() float64 {
	parts := []float64{0.1, 0.2}
	return parts[0] + parts[1]
}

// TestUSDSameWhateverTheOrder: a run's cost is the sum of its calls' costs
// in the order the answers arrived, so the same calls can sum to 0.1183275
// plus or minus float noise. Exported, it is the same bytes either way; it
// was 0.118328 one time and 0.118327 the next (a browser run and the same
// run by batcheval run exported 0.106578 and 0.106577).
func TestUSDSameWhateverTheOrder(t *testing.T) {
	for _, tc := range []struct {
		name          string
		calls         [][2]float64 // prompt and completion tokens per call
		input, output float64      // prices per million tokens
		want          string
	}{
		{"a micro-dollar boundary", [][2]float64{{2180, 655}, {8807, 297}, {7564, 669}, {4393, 328}, {7667, 284}, {5464, 581}}, 2.5, 10, "0.118328"},
		{"a boundary in dollars", [][2]float64{{4722, 395}, {19930, 1912}, {18462, 1658}, {1779, 1548}, {5143, 1728}}, 2.5, 10, "0.1975"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var forward, backward float64
			for i := range tc.calls {
				forward += callCost(tc.calls[i], tc.input, tc.output)
				backward += callCost(tc.calls[len(tc.calls)-1-i], tc.input, tc.output)
			}
			if forward == backward {
				t.Fatalf("the two orders sum to the same float %v: the case tests nothing", forward)
			}
			a, _ := json.Marshal(USD(forward))
			b, _ := json.Marshal(USD(backward))
			if string(a) != string(b) {
				t.Errorf("the same calls export %s summed forward (%v) and %s backward (%v)", a, forward, b, backward)
			}
			if string(a) != tc.want {
				t.Errorf("exported %s, want %s", a, tc.want)
			}
			if SettledUSD(forward) != SettledUSD(backward) {
				t.Errorf("settled %v and %v differ", SettledUSD(forward), SettledUSD(backward))
			}
		})
	}
}

// callCost prices one call as the runner does (runner.Cost).
func callCost(tokens [2]float64, input, output float64) float64 {
	return (tokens[0]*input + tokens[1]*output) / 1e6
}
