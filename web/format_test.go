package web

import "testing"

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
		{-0.5, "-$0.50"},
	}
	for _, tt := range tests {
		if got := Money(tt.in); got != tt.want {
			t.Errorf("Money(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		in   int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-12345, "-12,345"}}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
