package dataimport

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/batcheval/batcheval/evaluator"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// utf16File encodes text as Excel's "Unicode Text" does: UTF-16 with a
// byte order mark (little-endian unless big is set).
func utf16File(t *testing.T, text string, big bool) []byte {
	t.Helper()
	order := unicode.LittleEndian
	if big {
		order = unicode.BigEndian
	}
	b, err := unicode.UTF16(order, unicode.UseBOM).NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// windows1252File encodes text as older Excel's "CSV (Comma delimited)"
// does on a Western European Windows.
func windows1252File(t *testing.T, text string) []byte {
	t.Helper()
	b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Excel's "Unicode Text", a UTF-16 TSV, "CSV UTF-8" and an old Excel's
// Windows-1252 "CSV" were refused ("the file is UTF-16 encoded",
// "tab-separated files are not accepted", "not valid UTF-8 (byte 0xE9)").
// Each now imports with its texts exactly as written and its ratings read
// right, and says how it was read.
func TestImportEncodingsAndTabs(t *testing.T) {
	// What Excel writes for Unicode Text: CRLF between rows, a cell with
	// a tab, a line break (LF inside the cell) or a quote quoted, quotes
	// doubled.
	excelTSV := "id\tanswer\trating\r\n" +
		"s1\t\"Tab\there, \"\"quoted\"\" and\nsecond line\"\t4\r\n" +
		"s2\tCafé ’ 日本語 😀\t5\r\n"
	tests := []struct {
		name     string
		filename string
		data     []byte
		read     Reading
		note     string // a part of Reading.Note, or "" for no note
		answers  []string
		ratings  []float64
	}{
		{"excel unicode text (UTF-16LE TSV)", "Book1.txt", utf16File(t, excelTSV, false),
			Reading{UTF16LE, '\t'}, "The file was read as UTF-16 text, tab-separated.",
			[]string{"Tab\there, \"quoted\" and\nsecond line", "Café ’ 日本語 😀"}, []float64{4, 5}},
		{"UTF-16BE TSV", "data.tsv", utf16File(t, excelTSV, true),
			Reading{UTF16BE, '\t'}, "UTF-16 (big-endian) text, tab-separated",
			[]string{"Tab\there, \"quoted\" and\nsecond line", "Café ’ 日本語 😀"}, []float64{4, 5}},
		{"TSV with decimal commas", "ratings.tsv", []byte("id\tanswer\trating\ns1\tOui, merci\t3,5\ns2\t2,5\t-0,25\ns3\tok\t4.5\n"),
			Reading{UTF8, '\t'}, "The file was read as tab-separated.",
			[]string{"Oui, merci", "2,5", "ok"}, []float64{3.5, -0.25, 4.5}},
		{"UTF-8 with a byte order mark", "export.csv", []byte("\xEF\xBB\xBFid,answer,rating\r\ns1,\"Café, ’quoted’\",4\r\ns2,naïve,2\r\n"),
			Reading{UTF8BOM, ','}, "",
			[]string{"Café, ’quoted’", "naïve"}, []float64{4, 2}},
		{"Windows-1252 CSV", "old-excel.csv", windows1252File(t, "id;answer;rating\r\ns1;Un café, s’il vous plaît;4,5\r\ns2;“Très” bien — merci;3\r\n"),
			Reading{Windows1252, ';'}, "Windows-1252 text (not UTF-8), semicolon-separated",
			[]string{"Un café, s’il vous plaît", "“Très” bien — merci"}, []float64{4.5, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := DetectFormat(tt.filename, tt.data[:min(len(tt.data), 512)])
			if err != nil || f != CSV {
				t.Fatalf("DetectFormat = %q, %v; want csv", f, err)
			}
			// One byte a read: every character and line is cut somewhere.
			table, err := Parse(iotest.OneByteReader(bytes.NewReader(tt.data)), f, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if table.Read != tt.read {
				t.Errorf("read as %+v, want %+v", table.Read, tt.read)
			}
			if note := table.Read.Note(); (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want one with %q", note, tt.note)
			}
			if got := strings.Join(table.Columns, "|"); got != "id|answer|rating" {
				t.Fatalf("columns %q", got)
			}
			rows, err := table.Apply(Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "answer", Label: "Answer"}}, RatingColumns: []string{"rating"}})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if len(rows) != len(tt.answers) {
				t.Fatalf("%d rows, want %d", len(rows), len(tt.answers))
			}
			for i, r := range rows {
				if r.Data["answer"] != tt.answers[i] {
					t.Errorf("row %d answer %q, want %q", i+1, r.Data["answer"], tt.answers[i])
				}
				if got := r.Ratings["rating"]; got == nil || *got != tt.ratings[i] {
					t.Errorf("row %d rating %v, want %v", i+1, got, tt.ratings[i])
				}
			}
		})
	}
}

// A file that is UTF-8 from its start but has a stray byte further on is
// not guessed at: it is refused naming the line, with how to re-save it;
// so is a byte Windows-1252 leaves undefined, and UTF-16 without its mark.
func TestEncodingRefused(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"utf-8 then a stray byte", "id,answer\ns1,naïve\ns2,caf\xE9\n", `line 3: the text is not valid UTF-8 (byte 0xE9)`},
		{"undefined in windows-1252", "id,answer\ns1,caf\xE9\ns2,\x81\n", `line 2: the text is not valid UTF-8 (byte 0xE9)`},
		{"utf-16 without its mark", "i\x00d\x00\n\x00", `line 1: the file contains a NUL byte`},
		// Both in the first 64 KiB: not read as Windows-1252.
		{"windows-1252 then utf-8", "id,answer\ns1,caf\xE9\ns2,ok\ns3,\"caf\xC3\xA9\"\n", `line 2: the text is not valid UTF-8 (byte 0xE9)`},
		// Read as Windows-1252 from its start, UTF-8 further on: the
		// UTF-8 text would be garbled (â€™ for ’) without a word.
		{"windows-1252 then utf-8 past the first 64 KiB", "id,answer\ns1,caf\xE9\n" + strings.Repeat("s,"+strings.Repeat("x", 98)+"\n", 1000) + "s9,\xE2\x80\x99\n", `line 1003: the file was read as Windows-1252 (its start is not UTF-8), but this line holds UTF-8 text (“’”)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.data), iotest.OneByteReader(strings.NewReader(tt.data))} {
				_, err := Parse(r, CSV, Options{})
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "CSV UTF-8") {
					t.Errorf("Parse: %v, want %q and how to re-save", err, tt.want)
				}
			}
		})
	}
}

// The separator of a file without a header: tabs win when each line has
// as many, commas in the text notwithstanding.
func TestTabSeparatedWithoutHeader(t *testing.T) {
	table, err := Parse(strings.NewReader("s1\tHello, world\t4\ns2\tBye, now, then\t3\n"), CSV, Options{NoHeader: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(table.Columns, "|"); got != "column_1|column_2|column_3" || table.Records[1].Values["column_2"] != "Bye, now, then" {
		t.Errorf("columns %q, records %+v", got, table.Records)
	}
}
