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
