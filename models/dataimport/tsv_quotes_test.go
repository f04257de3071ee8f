package dataimport

import (
	"errors"
	"strings"
	"testing"
)

// TestTSVBareQuotes: a double quote inside a tab-separated cell is text
// (a dialogue line such as He said "hi" there), where it was refused as
// in CSV; a cell starting with a quote is a quoted cell when it is one
// (closed before a tab or a line end, its inner quotes doubled, as pandas
// and Excel write it, over several lines too), and text otherwise. CSV
// keeps refusing a bare quote. Fails before tsvQuotes: "line 2: a double
// quote (") appears inside a field that is not quoted".
func TestTSVBareQuotes(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  [][]string // cells of each record, in column order
	}{
		{"quote inside a cell", "id\ttext\n1\tHe said \"hi\" there\n", [][]string{{"1", `He said "hi" there`}}},
		{"quotes at the end of a cell", "id\ttext\n1\tshe said \"yes\"\n2\tok\n", [][]string{{"1", `she said "yes"`}, {"2", "ok"}}},
		{"cell starting with a quote that is text", "id\ttext\n1\t\"Hi,\" she said\n", [][]string{{"1", `"Hi," she said`}}},
		{"quoted cell as pandas writes it", "id\ttext\n1\t\"He said \"\"hi\"\"\"\n", [][]string{{"1", `He said "hi"`}}},
		{"quoted cell holding a tab", "id\ttext\tn\n1\t\"a\tb\"\t3\n", [][]string{{"1", "a\tb", "3"}}},
		{"quoted cell over two lines", "id\ttext\tn\n1\t\"first\nsecond \"\"x\"\"\"\t3\n2\tplain \"q\"\t4\n",
			[][]string{{"1", "first\nsecond \"x\"", "3"}, {"2", `plain "q"`, "4"}}},
		{"quote in the header", "id\tthe \"best\" answer\n1\tx\n", [][]string{{"1", "x"}}},
		{"windows line ends", "id\ttext\r\n1\ta \"b\" c\r\n2\t\"q\"\r\n", [][]string{{"1", `a "b" c`}, {"2", "q"}}},
		{"opening quote never closed", "id\ttext\n1\t\"Hello\n2\tx\n", nil}, // refused: a quoted cell not closed
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.input), CSV, Options{})
			if tt.want == nil {
				if err == nil {
					t.Fatalf("accepted %q", tt.input)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if table.Read.Separator != '\t' {
				t.Fatalf("separator %q, want a tab", table.Read.Separator)
			}
			if len(table.Records) != len(tt.want) {
				t.Fatalf("%d records, want %d", len(table.Records), len(tt.want))
			}
			for i, rec := range table.Records {
				for j, col := range table.Columns {
					if got := rec.Values[col]; got != tt.want[i][j] {
						t.Errorf("record %d, column %q = %q, want %q", i+1, col, got, tt.want[i][j])
					}
				}
			}
		})
	}
	if table, err := Parse(strings.NewReader("id\tthe \"best\" answer\n1\tx\n"), CSV, Options{}); err == nil && table.Columns[1] != `the "best" answer` {
		t.Errorf("header column = %q", table.Columns[1])
	}
}

// TestTSVQuoteErrorsNameRowAndColumn: a tab-separated cell that opens a
// quoted cell and never closes it is refused naming the line where it
// starts and its column; CSV's bare quote is still refused.
func TestTSVQuoteErrorsNameRowAndColumn(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantLine int
		wantCol  string
		wantMsg  string
	}{
		{"unclosed quoted cell", "id\ttext\tn\n1\tok\t2\n2\t\"never closed\t3\n3\tx\t4\n", 3, "text", "not closed"},
		{"unclosed without a header", "1\tok\n2\t\"never\n", 2, "column_2", "not closed"},
		{"csv bare quote", "id,text\n1,say \"hi\"\n", 2, "", "a double quote (\") appears inside a field that is not quoted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := Options{NoHeader: strings.HasPrefix(tt.name, "unclosed without")}
			_, err := Parse(strings.NewReader(tt.input), CSV, opt)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *ParseError", err, err)
			}
			if pe.Line != tt.wantLine || pe.Column != tt.wantCol || !strings.Contains(pe.Msg, tt.wantMsg) {
				t.Errorf("error = line %d, column %q, %q; want line %d, column %q, %q", pe.Line, pe.Column, pe.Msg, tt.wantLine, tt.wantCol, tt.wantMsg)
			}
		})
	}
}

// FuzzTSVCells checks tsvQuotes against two writers of tab-separated
// files: cells written as they are (as scripts write them; no cell holds
// a tab or a line break, and none starts with a quote) and cells written
// as pandas writes them (a cell holding a tab, a line break or a quote in
// quotes, its quotes doubled). Either way every cell reads back as
// written, or the file is refused: never read as other text.
func FuzzTSVCells(f *testing.F) {
	f.Add("He said \"hi\" there", "x", "\"Hi,\" she said")
	f.Add("a\"", "\"", "b\tc")
	f.Add("line\nbreak", "\"\"", "q\"\"q")
	f.Add("", "\r", "end\"")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		cells := []string{a, b, c}
		for _, cell := range cells {
			if strings.ContainsAny(cell, "\x00\r") || !utf8Valid(cell) {
				t.Skip()
			}
		}
		pandas := func(s string) string {
			if strings.ContainsAny(s, "\t\n\"") {
				return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
			}
			return s
		}
		raw := func(s string) string { return s }
		rawOK := true
		for _, cell := range cells {
			rawOK = rawOK && !strings.ContainsAny(cell, "\t\n") && !strings.HasPrefix(cell, `"`)
		}
		for name, write := range map[string]func(string) string{"pandas": pandas, "raw": raw} {
			if name == "raw" && !rawOK {
				continue
			}
			input := "id\ta\tb\tc\n1\t" + write(a) + "\t" + write(b) + "\t" + write(c) + "\n"
			table, err := Parse(strings.NewReader(input), CSV, Options{})
			if err != nil {
				if strings.TrimSpace(a+b+c) == "" {
					continue // a row of empty cells is no row
				}
				t.Fatalf("%s: %q refused: %v", name, input, err)
			}
			if len(table.Records) != 1 {
				t.Fatalf("%s: %q read as %d records", name, input, len(table.Records))
			}
			for i, col := range []string{"a", "b", "c"} {
				if got := table.Records[0].Values[col]; got != cells[i] {
					t.Errorf("%s: %q: column %s = %q, want %q", name, input, col, got, cells[i])
				}
			}
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
