package dataimport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// asciiRows is a CSV header and rows of ASCII text past the first 64 KiB
// (headerPeek), where the encoding used to be decided once for all.
func asciiRows(rows int) (string, int) {
	var b strings.Builder
	b.WriteString("id,answer\n")
	for i := range rows {
		fmt.Fprintf(&b, "s%d,An answer in plain ASCII text number %d\n", i, i)
	}
	return b.String(), rows + 1 // text, and its last line
}

// TestEncodingDecidedPastTheStart: a file whose first 64 KiB are ASCII is
// read in the encoding its first byte beyond ASCII shows, however far in:
// an old Excel CSV (Windows-1252) whose first accented letter comes on
// line 2,002 was refused as "not valid UTF-8"; it now reads right and says
// it was read as Windows-1252. A file that then mixes in the other
// encoding is refused naming the line and what to do, as at the start.
// Fails before: "line 2002: the text is not valid UTF-8 (byte 0xE9)".
func TestEncodingDecidedPastTheStart(t *testing.T) {
	head, last := asciiRows(2000)
	if len(head) <= headerPeek {
		t.Fatalf("the ASCII start is %d bytes, not past %d", len(head), headerPeek)
	}
	tests := []struct {
		name    string
		tail    []byte // after the ASCII rows
		enc     Encoding
		want    string // the last answer read, when accepted
		line    int    // the refused line, when refused
		message string
	}{
		{"windows-1252 late", []byte("s-late,Caf\xE9 cr\xE8me \x93quoted\x94\n"), Windows1252, "Café crème “quoted”", 0, ""},
		{"utf-8 late", []byte("s-late,Café crème “quoted”\n"), UTF8, "Café crème “quoted”", 0, ""},
		{"windows-1252 then utf-8", []byte("s-late,Caf\xE9\ns-later,Café\n"), "", "", last + 2, "mixes two encodings"},
		{"utf-8 then windows-1252", []byte("s-late,Café\ns-later,Caf\xE9\n"), "", "", last + 2, "the text is not valid UTF-8 (byte 0xE9)"},
		{"undefined byte", []byte("s-late,bad \x81 byte\n"), "", "", last + 1, "the text is not valid UTF-8 (byte 0x81)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := head + string(tt.tail)
			table, err := Parse(strings.NewReader(input), CSV, Options{})
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if table.Read.Encoding != tt.enc {
					t.Errorf("read as %s, want %s", table.Read.Encoding, tt.enc)
				}
				if got := table.Records[len(table.Records)-1].Values["answer"]; got != tt.want {
					t.Errorf("last answer %q, want %q", got, tt.want)
				}
				if got := table.Records[0].Values["answer"]; got != "An answer in plain ASCII text number 0" {
					t.Errorf("first answer %q", got)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *ParseError", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.message) || !strings.Contains(pe.Msg, "CSV UTF-8") {
				t.Errorf("error %q at line %d, want line %d and %q with what to do", pe.Msg, pe.Line, tt.line, tt.message)
			}
		})
	}
	// Scan's summary says the encoding decided late too.
	sum, err := Scan(strings.NewReader(head+"s-late,Caf\xE9\n"), CSV, Options{}, func(Record) error { return nil })
	if err != nil || sum.Read.Encoding != Windows1252 || !strings.Contains(sum.Read.Note(), "Windows-1252") {
		t.Errorf("Scan = %v, %+v", err, sum.Read)
	}
}
