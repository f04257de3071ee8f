package quote

import "testing"

func TestQuoted(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Fluency", "“Fluency”"},
		{"quotes, tags and a backslash as typed", `Fake <b>"judge"</b> C:\x`, `“Fake <b>"judge"</b> C:\x”`},
		{"unicode as typed", "Évaluation ★ 日本", "“Évaluation ★ 日本”"},
		{"emoji joiner kept", "👩\u200d💻", "“👩\u200d💻”"},
		{"line break and tab shown", "a\nb\tc\r", "“a␊b␉c␍”"},
		{"NUL and DEL shown", "a\x00b\x7f", "“a␀b␡”"},
		{"direction override shown", "abc\u202edef", "“abc⟨U+202E⟩def”"},
		{"C1 control shown", "a\u0085b", "“a⟨U+0085⟩b”"},
		{"invalid UTF-8", "a\xffb", "“a\uFFFDb”"},
		{"empty", "", "“”"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quoted(tt.in); got != tt.want {
				t.Errorf("Quoted(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestQuotedList(t *testing.T) {
	tests := []struct {
		names      []string
		conj, want string
	}{
		{nil, "or", ""},
		{[]string{`a"`}, "or", `“a"”`},
		{[]string{"a", "b"}, "and", "“a” and “b”"},
		{[]string{"a", "b", `c\`}, "or", `“a”, “b” or “c\”`},
	}
	for _, tt := range tests {
		if got := QuotedList(tt.names, tt.conj); got != tt.want {
			t.Errorf("QuotedList(%q, %q) = %q, want %q", tt.names, tt.conj, got, tt.want)
		}
	}
}

func TestVisibleLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Score: 4\nThe reply is \"fine\".", "Score: 4\nThe reply is \"fine\"."},
		{"a\r\nb\tc", "a\nb\tc"},
		{"lone\rreturn", "lone␍return"},
		{"bell\a <b>x</b> \\n", "bell␇ <b>x</b> \\n"},
		{"rtl\u202eX", "rtl⟨U+202E⟩X"},
	}
	for _, tt := range tests {
		if got := VisibleLines(tt.in); got != tt.want {
			t.Errorf("VisibleLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
