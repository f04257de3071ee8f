package excerpt

import (
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"fits", "Hello from the simulator", 24, "Hello from the simulator"},
		// The trial's bug: "Hello from the simul…" cut mid-word.
		{"mid word backs off", "Hello from the simulated judge", 21, "Hello from the…"},
		{"cut at a space", "Hello from the simulated judge", 15, "Hello from the…"},
		{"punctuation dropped", "one, two, three", 11, "one, two…"},
		{"one long word is split", "Supercalifragilisticexpialidocious", 10, "Supercali…"},
		{"too little kept splits", "a Supercalifragilisticexpialidocious", 12, "a Supercali…"},
		{"multibyte", "é è ê ë ï î ô ö", 6, "é è ê…"},
		{"multibyte mid word", "éèê ëïî ôö", 6, "éèê…"},
		{"one", "abc", 1, "…"},
		{"zero", "abc", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.in, tt.n)
			if got != tt.want {
				t.Fatalf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
			if tt.n > 0 && utf8.RuneCountInString(got) > tt.n {
				t.Fatalf("Cut(%q, %d) = %q is longer than %d", tt.in, tt.n, got, tt.n)
			}
		})
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"Hello\n  from\tthe simulated judge", 21, "Hello from the…"},
		{"short\ntext", 20, "short text"},
	}
	for _, tt := range tests {
		if got := Line(tt.in, tt.n); got != tt.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
