package handlers

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/models/dataimport"
)

// typedDecimal reads a decimal number a person typed in a form field, or
// says why it cannot, as words that follow the value ("is not a number
// (...)"). example is the number the advice shows, written with a dot
// ("0.2"); the advice shows it with a comma too.
//
// A decimal comma is read as a decimal point ("0,2" is 0.2) with the
// dataset uploads' own reader (dataimport.DecimalCommaNumber): a person
// whose locale writes decimals with a comma types one. Only where that
// reading is sure: "1,000" could be a thousand written with a separator
// as well as 1.000, so it is refused with both ways to write it; a comma
// with a dot too ("1,000.5") is refused, and so is NaN or infinity.
func typedDecimal(text, example string) (float64, string) {
	t := strings.TrimSpace(text)
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, "is not a number (write a finite number, e.g. " + example + ")"
		}
		return v, ""
	}
	dotted, ok := dataimport.DecimalCommaNumber(t)
	if !ok {
		return 0, fmt.Sprintf("is not a number (write decimals with a dot or a comma, e.g. %s or %s, and no thousands separators)", example, strings.Replace(example, ".", ",", 1))
	}
	body := strings.TrimLeft(dotted, "+-")
	sign := dotted[:len(dotted)-len(body)]
	whole, frac, _ := strings.Cut(body, ".")
	if len(frac) == 3 && len(whole) <= 3 && whole[0] != '0' {
		return 0, fmt.Sprintf("could be %s%s%s with a thousands separator or %s%s.%s with a decimal comma: write %s%s%s or %s%s.%s",
			sign, whole, frac, sign, whole, frac, sign, whole, frac, sign, whole, frac)
	}
	v, err := strconv.ParseFloat(dotted, 64)
	if err != nil {
		return 0, fmt.Sprintf("is not a number (write decimals with a dot or a comma, e.g. %s or %s)", example, strings.Replace(example, ".", ",", 1))
	}
	return v, ""
}
