package report

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/internal/money"
)

// Decimal places of exported amounts. Stored costs are sums of per-call
// floats, so they carry noise such as 0.30000000000000004; exports write
// them rounded, so the same cost always gives the same bytes.
const (
	// usdPlaces rounds a run's cost to the micro-dollar, far finer than
	// any judge bills.
	usdPlaces = 6
	// usdPerSamplePlaces rounds a cost per sample to the nano-dollar: a
	// cheap judge's cost per sample is a few micro-dollars, which six
	// places would leave with one or two digits (or none).
	usdPerSamplePlaces = 9
)

// USD is an amount of US dollars as exports write it: rounded to six
// decimal places, trailing zeros dropped (0.3, 0.001234, 5).
type USD float64

// MarshalJSON writes the rounded amount; null when it is not a number.
func (u USD) MarshalJSON() ([]byte, error) { return roundedUSD(float64(u), usdPlaces), nil }

// USDPerSample is a cost per sample as exports write it: rounded to nine
// decimal places, trailing zeros dropped.
type USDPerSample float64

// MarshalJSON writes the rounded amount; null when it is not a number.
func (u USDPerSample) MarshalJSON() ([]byte, error) {
	return roundedUSD(float64(u), usdPerSamplePlaces), nil
}

// USDOf is a stored cost as an export writes it; nil (unknown) stays nil.
func USDOf(v *float64) *USD {
	if v == nil {
		return nil
	}
	u := USD(*v)
	return &u
}

// USDPerSampleOf is a cost per sample as an export writes it; nil stays nil.
func USDPerSampleOf(v *float64) *USDPerSample {
	if v == nil {
		return nil
	}
	u := USDPerSample(*v)
	return &u
}

// SettledUSD is a summed cost without its float noise (money.Settled):
// the same calls' costs added in another order give the same value, so a
// cost on a rounding boundary rounds the same way whichever order it was
// summed in. NaN and infinities are returned as they are.
func SettledUSD(v float64) float64 { return money.Settled(v) }

// roundedUSD formats v with places decimals and trims the zeros that
// follow the last significant one; v is settled first (SettledUSD), and
// its shortest decimal rounded half away from zero, as the pages round
// money (money.Text): 0.0001235 is 0.000124 here as on the run page,
// where rounding the float (0.00012349999…) wrote 0.000123.
func roundedUSD(v float64, places int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null")
	}
	exact, ok := new(big.Rat).SetString(strconv.FormatFloat(SettledUSD(v), 'g', -1, 64))
	if !ok {
		return []byte("null")
	}
	s := exact.FloatString(places) // big.Rat rounds halves away from zero
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		// A tiny negative correction rounds to zero, not to "minus zero".
		s = "0"
	}
	return []byte(s)
}
