package report

import (
	"math"
	"strconv"
	"strings"
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

// usdSignificant is how many significant digits of a summed cost are
// kept before it is rounded for display. A float64 holds about 16; the
// sum of a run's per-call costs, added in the order the answers arrived,
// is off by a few units of the last one or two, and 12 leave that noise
// out for sums of millions of calls while keeping every micro-dollar of
// any cost below a million dollars.
const usdSignificant = 12

// SettledUSD is a summed cost without its float noise: v to usdSignificant
// significant digits. The same calls' costs added in another order (the
// answers of a run arrive in any order) give the same value, so a cost
// that lies on a rounding boundary, such as 0.1183275, rounds the same way
// whichever order it was summed in, instead of to 0.118328 one time and
// 0.118327 the next. NaN and infinities are returned as they are.
func SettledUSD(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	s, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', usdSignificant, 64), 64)
	if err != nil {
		return v
	}
	return s
}

// roundedUSD formats v with places decimals and trims the zeros that
// follow the last significant one; v is settled first (SettledUSD).
func roundedUSD(v float64, places int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null")
	}
	s := strconv.FormatFloat(SettledUSD(v), 'f', places, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		// A tiny negative correction rounds to zero, not to "minus zero".
		s = "0"
	}
	return []byte(s)
}
