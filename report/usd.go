package report

import "github.com/batcheval/batcheval/internal/money"

// Decimal places of exported amounts (money.Places, money.PerSamplePlaces).
// Stored costs are sums of per-call floats, so they carry noise such as
// 0.30000000000000004; exports write them rounded, so the same cost always
// gives the same bytes, and the pages show that rounded amount (money.Text).
const (
	usdPlaces          = money.Places
	usdPerSamplePlaces = money.PerSamplePlaces
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

// roundedUSD is v as an export writes it (money.Decimal): settled, rounded
// half away from zero to places decimals, its trailing zeros dropped; null
// when it is not a number.
func roundedUSD(v float64, places int) []byte {
	s := money.Decimal(v, places)
	if s == "" {
		return []byte("null")
	}
	return []byte(s)
}
