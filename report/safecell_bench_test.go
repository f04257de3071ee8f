package report

import (
	"strings"
	"testing"
)

// safeCellBefore is SafeCell as it was before signed numbers were kept:
// the baseline of BenchmarkSafeCell, measured in the same process.
func safeCellBefore(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '\t', '\r':
		return "'" + s
	}
	rest := strings.TrimLeftFunc(s, blankRune)
	if rest == "" {
		return s
	}
	switch rest[0] {
	case '=', '+', '-', '@':
		return "'" + s
	}
	return s
}

// BenchmarkSafeCell: what a CSV export pays per text cell, SafeCell
// against the version before (ratio in BENCHMARKS.md). Only a cell that
// starts with a sign reads the number pattern.
func BenchmarkSafeCell(b *testing.B) {
	for _, c := range []struct{ name, cell string }{
		{"text", "The reply answers the question and stays polite."},
		{"formula", "=HYPERLINK(\"http://evil\",\"x\")"},
		{"signed number", "-0.5"},
		{"signed text", "-2+3 is not a reply"},
	} {
		for _, f := range []struct {
			name string
			fn   func(string) string
		}{{"before", safeCellBefore}, {"now", SafeCell}} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = f.fn(c.cell)
				}
			})
		}
	}
}
