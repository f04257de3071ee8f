package stats

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
)

// CoefDecimal writes a correlation coefficient, or a figure made of
// coefficients (an interval bound, a difference, an agreement among
// annotators), with digits decimals, the one way every page, sentence
// and table rounds them: the shortest decimal that reads back as the
// float (what the JSON export and the API write for it, strconv's 'g' -1)
// rounded half away from zero. A reader who rounds the exported 0.1235 by
// hand gets 0.124, and so does the page, where rounding the float itself
// (0.12349999999999999866…) showed 0.123. It is not double rounding: that
// decimal is the float as exported, and 0.12349999999999998, a float of
// its own, stays 0.123. The sign is an ASCII hyphen, kept on a figure
// that rounds to zero ("-0.000"): callers decide how zero shows. NaN and
// infinities are written as strconv writes them.
func CoefDecimal(v float64, digits int) string {
	if digits < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	var buf [32]byte // the shortest decimal, on the stack
	short := strconv.AppendFloat(buf[:0], v, 'f', -1, 64)
	dot := bytes.IndexByte(short, '.')
	// Rounding the float and rounding its shortest decimal part ways only
	// when that decimal lies exactly half-way at the shown digits (its
	// decimals past them are one 5): were a half-way point strictly
	// between the float and its shortest decimal, that point would be a
	// decimal as short and closer to the float, and the shortest.
	if dot < 0 || len(short)-dot-1 != digits+1 || short[len(short)-1] != '5' {
		return strconv.FormatFloat(v, 'f', digits, 64)
	}
	r, ok := new(big.Rat).SetString(string(short))
	if !ok {
		return strconv.FormatFloat(v, 'f', digits, 64)
	}
	// big.Rat.FloatString rounds halves away from zero.
	return r.FloatString(digits)
}

// coefHundredths is v as CoefDecimal prints it with two decimals, without
// a negative zero; NaN stays NaN.
func coefHundredths(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	x, err := strconv.ParseFloat(CoefDecimal(v, 2), 64)
	if err != nil {
		return math.NaN()
	}
	return x + 0
}
