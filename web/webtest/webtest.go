// Package webtest helps tests read what package web renders, as
// models/dbtest helps them open databases. Only tests import it: the
// product's pages write numbers, they never read them back.
package webtest

import (
	"strconv"
	"strings"
)

// ParseNumber reads a number as a page shows it: the true minus sign
// (U+2212) of web.Minus read as a hyphen, and the thousands separators of
// web.Count and the chart ticks dropped ("−2,500" is -2500).
func ParseNumber(s string) (float64, error) {
	s = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "\u2212", "-"), ",", "")
	return strconv.ParseFloat(s, 64)
}
