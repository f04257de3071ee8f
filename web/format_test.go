package web

import (
	"math"
	"testing"
)

func TestMoney(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.5, "$0.50"}, // was "$0.5" on the judges page
		{2.5, "$2.50"},
		{10, "$10.00"},
		{1234.567, "$1234.57"},
		{0, "$0.00"},
		{0.15, "$0.15"},
		{0.075, "$0.075"},
		{0.0123456, "$0.0123"},
		{0.000457, "$0.000457"},
		{0.4567, "$0.457"},
		{-0.5, "−$0.50"}, // a true minus sign, as every page number (Minus)
		// A rounded amount keeps its three significant digits: 0.0100135
		// showed as "$0.01" beside "$0.00774" on the experiment page.
		{0.0100135, "$0.0100"},
		{0.00774, "$0.00774"},
		{0.120004, "$0.120"},
		{0.0099996, "$0.0100"},
		{0.1 + 0.05, "$0.15"}, // float noise of a sum is still exact
		// Half-way at the shown digits: rounded as a reader of the
		// exported amount rounds it, half away from zero, whichever side
		// of the half the float lies.
		{1.125, "$1.13"},                      // was $1.12 (an exact binary half, to even)
		{2.675, "$2.68"},                      // was $2.67 (its float is 2.67499999…)
		{0.1235, "$0.124"},                    // was $0.123 (its float is 0.12349999…)
		{math.Nextafter(0.1235, 0), "$0.124"}, // settled to 0.1235, as the export writes it
		{0.12349, "$0.123"},
		{0.009995, "$0.0100"}, // three significant digits of the rounded amount
		{0.0009995, "$0.00100"},
		// More than six decimals: the export writes 0.12349951 as 0.1235,
		// which its reader rounds to $0.124; the page showed $0.123 from
		// the unrounded amount.
		{0.12349951, "$0.124"},
		{-0.12349951, "−$0.124"},
		{0.00012349951, "$0.000123"}, // exported as 0.000123
		{3e-7, "$0.00"},              // exported as 0
	}
	for _, tt := range tests {
		if got := Money(tt.in); got != tt.want {
			t.Errorf("Money(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMoneyPerSample: a cost per sample is exported to the nano-dollar, so
// the page rounds that decimal: a few micro-dollars keep three digits, and
// a half-way amount past the ninth decimal rounds as its export does.
func TestMoneyPerSample(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0.0000034567891, "$0.00000346"},
		{0.00012349999951, "$0.000124"}, // exported as 0.0001235
		{0.12349951, "$0.123"},          // exported as 0.12349951
	} {
		if got := MoneyPerSample(tt.in); got != tt.want {
			t.Errorf("MoneyPerSample(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		in   int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-12345, "−12,345"}}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMoneySameWhateverTheOrder: a run's cost sums its calls' costs in the
// order the answers arrived; the same calls summed in two orders (0.1975
// plus or minus float noise) show the same amount. They showed $0.198 and
// $0.197.
func TestMoneySameWhateverTheOrder(t *testing.T) {
	calls := [][2]float64{{4722, 395}, {19930, 1912}, {18462, 1658}, {1779, 1548}, {5143, 1728}}
	var forward, backward float64
	for i := range calls {
		// Priced as runner.Cost does, at $2.50 and $10 per million tokens.
		forward += (calls[i][0]*2.5 + calls[i][1]*10) / 1e6
		j := len(calls) - 1 - i
		backward += (calls[j][0]*2.5 + calls[j][1]*10) / 1e6
	}
	if forward == backward {
		t.Fatalf("both orders sum to %v: the case tests nothing", forward)
	}
	if a, b := Money(forward), Money(backward); a != b || a != "$0.198" {
		t.Errorf("Money = %s summed forward (%v), %s backward (%v); want $0.198 both", a, forward, b, backward)
	}
}
