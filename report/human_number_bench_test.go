package report

import (
	"strconv"
	"strings"
	"testing"
)

// humanNumberBefore is HumanNumber as it was before it rounded the
// exported decimal: the float rounded (the baseline of the benchmark).
func humanNumberBefore(v float64) string {
	s := strconv.FormatFloat(v, 'f', csvDecimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// BenchmarkHumanNumber writes the CSV's numbers of a typical run: means of
// five rounds of tenths, of three rounds (thirds), of eight rounds of
// hundredths (half of them half-way at the fifth decimal), against the
// float rounding of before.
func BenchmarkHumanNumber(b *testing.B) {
	var vals []float64
	for i := range 1000 {
		vals = append(vals, float64(10+i%41)/10, (1+float64(i%7)/10+2+3.1)/3, float64(800+i)/800)
	}
	for _, f := range []struct {
		name string
		fn   func(float64) string
	}{{"before", humanNumberBefore}, {"now", HumanNumber}} {
		b.Run(f.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				for _, v := range vals {
					n += len(f.fn(v))
				}
			}
			_ = n
		})
	}
}
