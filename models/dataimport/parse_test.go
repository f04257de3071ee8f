package dataimport

import (
	"errors"
	"fmt"
	"github.com/batcheval/batcheval/internal/shareddata"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		head     string
		want     Format
		wantErr  string
	}{
		{"csv by extension", "data.CSV", "{odd", CSV, ""},
		{"jsonl by extension", "data.jsonl", `{"a":1}`, JSONL, ""},
		{"ndjson", "data.ndjson", `{"a":1}`, JSONL, ""},
		{"json array by extension", "data.json", " \n[{\"a\":1}]", JSON, ""},
		{"json lines under a .json name", "data.json", `{"a":1}` + "\n", JSONL, ""},
		{"jsonl extension holding an array", "data.jsonl", `[{"a":1}]`, JSON, ""},
		{"sniff array", "upload", "\t[", JSON, ""},
		{"sniff object", "upload", "\xEF\xBB\xBF{\"a\":1}", JSONL, ""},
		{"sniff csv", "upload", "id,text\n", CSV, ""},
		{"csv header in angle brackets", "data.csv", "<id>,text\n", CSV, ""},
		// Other extensions are refused, naming the accepted ones and, from
		// the content, the name to give the file.
		{"txt holding csv", "wrongext.txt", "id,text\n1,hi\n", "", "files ending in .txt are not accepted: upload a .csv, .tsv, .jsonl or .json file; this one looks like comma-separated values: if it is a table with a header row, rename it to end in .csv"},
		{"txt holding json lines", "rows.TXT", `{"a":1}`, "", "files ending in .txt are not accepted: upload a .csv, .tsv, .jsonl or .json file; this one looks like JSON Lines: if it is, rename it to end in .jsonl"},
		{"txt holding an array", "rows.txt", `[{"a":1}]`, "", "this one looks like a JSON array: if it is, rename it to end in .json"},
		{"txt holding prose", "notes.txt", "Dear all\nhere are the results\n", "", "files ending in .txt are not accepted: upload a .csv, .tsv, .jsonl or .json file"},
		// A saved web page, whatever its name.
		{"html page", "page.html", "<html><body>hi</body></html>", "", "this looks like an HTML page (a saved web page), not a CSV, JSONL or JSON file: export your table as CSV, JSONL or JSON"},
		{"html under a csv name", "data.csv", "\xEF\xBB\xBF\n <!DOCTYPE html>\n<html>", "", "this looks like an HTML page"},
		{"xhtml under a json name", "data.json", "<?xml version=\"1.0\"?>\n<html xmlns=\"x\">", "", "this looks like an HTML page"},
		{"xml", "data.json", "<?xml version=\"1.0\"?>\n<rows/>", "", "this looks like an XML file"},
		// A CSV table under a JSON name.
		{"csv under a json name", "data.json", "id,text\n1,hi\n", "", "the file is named .json but its first line looks like comma-separated values (CSV), not JSON: if it is a table with a header row, rename it to end in .csv"},
		{"csv under a jsonl name", "data.jsonl", "id,text\n1,hi\n", "", "the file is named .jsonl but its first line looks like comma-separated values"},
		{"not json under a json name", "data.json", "hello\n", JSON, ""},
		{"empty", "data.csv", " \n ", "", "empty"},
		{"xlsx by extension", "ratings.xlsx", "PK", "", "CSV UTF-8"},
		{"xlsx content", "ratings.csv", "PK\x03\x04rest", "", "spreadsheet"},
		{"tsv", "ratings.tsv", "a\tb", CSV, ""},
		{"utf-16", "ratings.csv", "\xFF\xFEi\x00d\x00", CSV, ""},
		{"utf-16 big-endian", "ratings.csv", "\xFE\xFF\x00i\x00d", CSV, ""},
		// Excel's "Unicode Text" and "Text (Tab delimited)" are .txt files.
		{"excel unicode text", "Book1.txt", "\xFF\xFEi\x00d\x00\t\x00a\x00\r\x00\n\x00", CSV, ""},
		{"tab-delimited text", "Book1.txt", "id\tanswer\r\n1\thi", CSV, ""},
		{"utf-16 json lines", "rows.jsonl", "\xFF\xFE{\x00}\x00", JSONL, ""},
		{"nul bytes", "ratings.txt", "i\x00d\x00", "", "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DetectFormat(tt.filename, []byte(tt.head))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DetectFormat(%q) error = %v, want one mentioning %q", tt.filename, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DetectFormat(%q) error: %v", tt.filename, err)
			}
			if got != tt.want {
				t.Errorf("DetectFormat(%q) = %q, want %q", tt.filename, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		format   Format
		input    string
		opt      Options
		wantLine int
		wantItem bool
		wantCol  string
		wantMsg  string // a fragment of Error()
	}{
		{"jsonl truncated line", JSONL, "{\"a\":1}\n{\"a\":2}\n{\"a\":", Options{}, 3, false, "",
			"line 3: invalid JSON: unexpected end of input — fix the line or remove it"},
		{"jsonl bad character", JSONL, "{\"a\":1}\n\n{a:2}\n", Options{}, 3, false, "", "line 3: invalid JSON: invalid character"},
		{"jsonl line not an object", JSONL, "{\"a\":1}\n[1,2]\n", Options{}, 2, false, "", "line 2: expected a JSON object"},
		{"jsonl two values on a line", JSONL, "{\"a\":1} {\"a\":2}\n", Options{}, 1, false, "", "invalid JSON"},
		{"jsonl duplicate key", JSONL, "{\"a\":1}\n{\"s\":{\"x\":1,\"x\":2}}\n", Options{}, 2, false, "s.x", `line 2, column “s.x”: this key appears twice`},
		{"jsonl empty key", JSONL, "{\"\":1}\n", Options{}, 1, false, "", "empty key"},
		{"json item not an object", JSON, "[{\"a\":1},\n 5]", Options{}, 2, true, "", "item 2: expected a JSON object ({...}) but found a number"},
		// A JSON array's syntax errors name the line, and the item.
		{"json item invalid", JSON, "[{\"a\":1},\n{\"a\":}]", Options{}, 2, false, "", "line 2: invalid JSON in item 2: invalid character '}'"},
		{"json error deep in a pretty-printed item", JSON, "[\n  {\"a\": 1},\n  {\n    \"a\":\n      ,\n    \"b\": 2\n  }\n]", Options{}, 5, false, "",
			"line 5: invalid JSON in item 2: invalid character ','"},
		{"json line break in a string", JSON, "[\n{\"a\":1},\n{\"a\":2},\n{\"a\":\"x\ny\"}\n]", Options{}, 4, false, "", "line 4: invalid JSON in item 3"},
		{"json missing comma", JSON, "[\n{\"a\":1}\n\n{\"a\":2}\n]", Options{}, 4, false, "", "line 4: invalid JSON in item 2: expected comma after array element"},
		{"json truncated array", JSON, "[{\"a\":1},\n{\"a\":", Options{}, 2, false, "", "line 2: invalid JSON in item 2: unexpected end of input"},
		{"json array not closed", JSON, "[{\"a\":1}\n", Options{}, 1, false, "", "line 1: invalid JSON: unexpected end of input — check the end of the array"},
		{"json not json", JSON, "\n\nhello", Options{}, 3, false, "", "line 3: invalid JSON: invalid character 'h' looking for beginning of value; a JSON file should hold an array of objects"},
		{"json holding csv", JSON, "id,text\n1,hi\n", Options{}, 1, false, "", "line 1: invalid JSON: invalid character 'i' looking for beginning of value; the file looks like comma-separated values (CSV)"},
		{"json single object", JSON, "{\"a\":1}", Options{}, 0, false, "", "single JSON object"},
		{"json trailing content", JSON, "[{\"a\":1}]\n\n [", Options{}, 3, false, "", "line 3: there is more content after the closing ]"},
		{"json trailing garbage", JSON, "[{\"a\":1}]\nx", Options{}, 2, false, "", "line 2: there is more content after the closing ]"},
		{"json empty array", JSON, "[]", Options{}, 0, false, "", "the file has no rows"},
		// QA: accepted as 1 row of 0 columns, a mapping page with nothing to choose.
		{"json empty objects", JSON, "[{}, {}]", Options{}, 0, false, "", "the file has no columns: every row is an empty object"},
		{"jsonl empty object", JSONL, "{}\n", Options{}, 0, false, "", "the file has no columns: every row is an empty object"},
		{"csv empty file", CSV, "", Options{}, 0, false, "", "the file has no rows"},
		{"csv header only", CSV, "id,text\r\n", Options{}, 0, false, "", "the file has no rows"},
		{"jsonl blank lines only", JSONL, "\n  \n", Options{}, 0, false, "", "the file has no rows"},
		{"csv unnamed column with data", CSV, "id,,text\n1,,3\n2,x,4\n", Options{}, 3, false, "", `line 3: column 2 has no name in the header row but holds “x” here: give it a name`},
		{"csv header without names", CSV, ",,\n1,2,3\n", Options{}, 1, false, "", "line 1: the header row has no column names"},
		{"csv row longer than the unnamed columns", CSV, "id,text,,\n1,a,,,\n", Options{}, 2, false, "", "this row has 5 fields but the header has 4 columns"},
		{"csv duplicate column that is a number", CSV, "id,4,4\n1,2,3\n", Options{}, 1, false, "4", `line 1, column “4”: columns 2 and 3 have the same name`},
		// Semicolon-separated files are read (csvDelimiter); a header with
		// both separators is still refused.
		{"csv header with commas and semicolons", CSV, "id;text,rating\n1;hi,3\n", Options{}, 1, false, "", "line 1: the header has both commas and semicolons"},
		{"csv semicolons too few fields", CSV, "id;text\r\n1;hi\r\n2\r\n", Options{}, 3, false, "", "line 3: this row has 1 field but the header has 2 columns, so it ends before its last column: give every column a value, writing an empty one as nothing between two semicolons (“;;”)"},
		{"csv too few fields", CSV, "id,text\n1,hi\n2\n", Options{}, 3, false, "", "line 3: this row has 1 field but the header has 2 columns, so it ends before its last column"},
		// QA: a row that ends early was told to look for an unquoted
		// comma, which gives a row more fields, not fewer.
		{"csv row ending early is not told of unquoted commas", CSV, "id,text,score\n1,a,4\n2,b\n", Options{}, 3, false, "", "line 3: this row has 2 fields but the header has 3 columns, so it ends before its last column: give every column a value, writing an empty one as nothing between two commas (“,,”), or check for a double quote that is not closed"},
		{"tsv row ending early", CSV, "id\ttext\tscore\n1\ta\t4\n2\tb\n", Options{}, 3, false, "", "line 3: this row has 2 fields but the header has 3 columns, so it ends before its last column: give every column a value, writing an empty one as nothing between two tabs, or check"},
		{"csv too many fields after a multi-line field", CSV, "id,text\n1,\"two\nlines\"\n2,a,b\n", Options{}, 4, false, "", "line 4: this row has 3 fields"},
		{"csv bare quote", CSV, "id,text\n1,say \"hi\"\n", Options{}, 2, false, "", "line 2: a double quote"},
		{"csv unclosed quote", CSV, "id,text\n1,ok\n2,\"never closed\n3,x\n", Options{}, 3, false, "", "line 3: a quoted field is not closed"},
		// UTF-8 from its start (a file that is not is read as Windows-1252).
		{"csv invalid utf-8", CSV, "id,text\n1,naïve\n2,caf\xE9\n", Options{}, 3, false, "", "line 3: the text is not valid UTF-8 (byte 0xE9)"},
		{"json invalid utf-8", JSON, "[\n{\"a\":\"ok…\"},\n{\"a\":\"caf\xE9\"}\n]", Options{}, 3, false, "", "line 3: the text is not valid UTF-8"},
		{"jsonl truncated character at end", JSONL, "{\"a\":\"x\"}\n{\"a\":\"\xE2\x82", Options{}, 2, false, "", "line 2: the text is not valid UTF-8"},
		{"nul byte", CSV, "id,text\n1,a\x00b\n", Options{}, 2, false, "", "line 2: the file contains a NUL byte"},
		{"nul escaped in a jsonl value", JSONL, "{\"id\":\"1\"}\n{\"id\":\"2\",\"text\":\"a\\u0000b\"}\n", Options{}, 2, false, "text", `line 2, column “text”: the value holds a NUL character`},
		{"nul escaped in a json item's key", JSON, "[{\"id\":\"1\",\"te\\u0000xt\":\"a\"}]", Options{}, 1, true, "", `item 1: the key “te␀xt” holds a NUL character`},
		{"too many rows", CSV, "id\n1\n2\n3\n", Options{MaxRows: 2}, 4, false, "", "more than 2 rows"},
	}
	// Megabytes before the error: the line is still counted right once
	// the kept input has moved on.
	var long strings.Builder
	long.WriteString("[\n")
	for i := range 30000 {
		fmt.Fprintf(&long, "{\"id\": %d, \"text\": \"%s\"},\n", i, strings.Repeat("w", 80))
	}
	long.WriteString("{\"id\": oops}\n]")
	tests = append(tests, struct {
		name     string
		format   Format
		input    string
		opt      Options
		wantLine int
		wantItem bool
		wantCol  string
		wantMsg  string
	}{"json error after megabytes", JSON, long.String(), Options{}, 30002, false, "", "line 30002: invalid JSON in item 30001: invalid character 'o'"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.input), tt.format, tt.opt)
			if table != nil {
				t.Errorf("Parse returned a table along with error %v", err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v (%T), want a *ParseError", err, err)
			}
			if pe.Line != tt.wantLine {
				t.Errorf("Line = %d, want %d (%v)", pe.Line, tt.wantLine, err)
			}
			if pe.Item != tt.wantItem {
				t.Errorf("Item = %v, want %v (%v)", pe.Item, tt.wantItem, err)
			}
			if pe.Column != tt.wantCol {
				t.Errorf("Column = %q, want %q (%v)", pe.Column, tt.wantCol, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err.Error(), tt.wantMsg)
			}
		})
	}
}

func TestParseSizeLimit(t *testing.T) {
	input := "id,text\n1,hello\n" // 16 bytes
	tests := []struct {
		name     string
		maxBytes int64
		wantErr  string
	}{
		{"under the limit", 100, ""},
		{"exactly the limit", 16, ""},
		{"one byte over", 15, "the file is larger than the 15 bytes limit; raise BATCHEVAL_MAX_UPLOAD_MB or split it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(input), CSV, Options{MaxBytes: tt.maxBytes})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse error: %v", err)
				}
				if got := len(table.Records); got != 1 {
					t.Errorf("got %d records, want 1", got)
				}
				return
			}
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("Parse error = %v, want a *TooLargeError", err)
			}
			if table != nil {
				t.Errorf("Parse returned a table along with the error")
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q, want %q", err.Error(), tt.wantErr)
			}
		})
	}
	// The default limit is worded in MiB; a JSON array is cut off too.
	big := "[" + strings.Repeat(`{"a":"xxxxxxxxxxxxxxxxxxxx"},`, 1<<20/28+10) + `{"a":""}]`
	_, err := Parse(strings.NewReader(big), JSON, Options{MaxBytes: 1 << 20})
	if err == nil || err.Error() != "the file is larger than the 1 MiB limit; raise BATCHEVAL_MAX_UPLOAD_MB or split it" {
		t.Errorf("JSON over 1 MiB: error = %v", err)
	}
}

func TestParseRecords(t *testing.T) {
	tests := []struct {
		name        string
		format      Format
		input       string
		wantColumns []string
		wantRecords []Record
	}{
		{
			name:        "csv with BOM and CRLF",
			format:      CSV,
			input:       "\xEF\xBB\xBFid, text \r\n1,hello\r\n2,\"a, b\"\r\n",
			wantColumns: []string{"id", "text"},
			wantRecords: []Record{
				{Line: 2, Values: map[string]string{"id": "1", "text": "hello"}},
				{Line: 3, Values: map[string]string{"id": "2", "text": "a, b"}},
			},
		},
		{
			name:        "csv quoted multi-line fields and blank rows",
			format:      CSV,
			input:       "id,context\n1,\"User: hi\r\nAssistant: \"\"hello\"\"\"\n,\n2,\"a\n\nb\"\n",
			wantColumns: []string{"id", "context"},
			wantRecords: []Record{
				{Line: 2, Values: map[string]string{"id": "1", "context": "User: hi\nAssistant: \"hello\""}},
				{Line: 5, Values: map[string]string{"id": "2", "context": "a\n\nb"}},
			},
		},
		{
			// QA: spreadsheets export columns that were once formatted as
			// empty, unnamed columns; they were refused as "column 4 has
			// no name". Unnamed and empty in every row, they are left out,
			// also when a row stops before them.
			name:        "csv export with empty unnamed columns",
			format:      CSV,
			input:       "\xEF\xBB\xBFid,,text,rating,,\r\n1,,hello,4,,\r\n2, ,\"a, b\",,\r\n3,,c,5\r\n,,,,,\r\n",
			wantColumns: []string{"id", "text", "rating"},
			wantRecords: []Record{
				{Line: 2, Values: map[string]string{"id": "1", "text": "hello", "rating": "4"}},
				{Line: 3, Values: map[string]string{"id": "2", "text": "a, b", "rating": ""}},
				{Line: 4, Values: map[string]string{"id": "3", "text": "c", "rating": "5"}},
			},
		},
		{
			name:   "jsonl nested flattening",
			format: JSONL,
			input: "\xEF\xBB\xBF{\"id\":\"x1\",\"n\":1.50,\"ok\":true,\"none\":null,\"history\":[\"hi\",\"hello\"],\"mixed\":[1, \"a\"],\"scores\":{\"Coherent\":2,\"deep\":{\"a\":false}},\"empty\":{}}\n" +
				"\n" +
				"{\"id\":\"x2\",\"extra\":\"é\"}\r\n",
			wantColumns: []string{"id", "n", "ok", "none", "history", "mixed", "scores.Coherent", "scores.deep.a", "empty", "extra"},
			wantRecords: []Record{
				{Line: 1, Values: map[string]string{
					"id": "x1", "n": "1.50", "ok": "true", "none": "", "history": "hi\nhello",
					"mixed": `[1,"a"]`, "scores.Coherent": "2", "scores.deep.a": "false", "empty": "",
				}},
				{Line: 3, Values: map[string]string{"id": "x2", "extra": "é"}},
			},
		},
		{
			name:        "json array items numbered",
			format:      JSON,
			input:       " [\n {\"text\": \"a\\nb\", \"r\": 1e2},\n {\"text\": \"c\", \"r\": -0.5}\n]\n",
			wantColumns: []string{"text", "r"},
			wantRecords: []Record{
				{Line: 1, Values: map[string]string{"text": "a\nb", "r": "1e2"}},
				{Line: 2, Values: map[string]string{"text": "c", "r": "-0.5"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, so that characters and lines are cut at
			// every possible place between reads.
			table, err := Parse(iotest.OneByteReader(strings.NewReader(tt.input)), tt.format, Options{})
			if err != nil {
				t.Fatalf("Parse error: %v", err)
			}
			if table.Format != tt.format {
				t.Errorf("Format = %q, want %q", table.Format, tt.format)
			}
			if !reflect.DeepEqual(table.Columns, tt.wantColumns) {
				t.Errorf("Columns = %q, want %q", table.Columns, tt.wantColumns)
			}
			if !reflect.DeepEqual(table.Records, tt.wantRecords) {
				t.Errorf("Records = %#v, want %#v", table.Records, tt.wantRecords)
			}
		})
	}
}

func TestPreview(t *testing.T) {
	table, err := Parse(strings.NewReader("a\n1\n2\n3\n"), CSV, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n, want int
	}{{0, 0}, {-1, 0}, {2, 2}, {10, 3}}
	for _, tt := range tests {
		if got := len(table.Preview(tt.n)); got != tt.want {
			t.Errorf("len(Preview(%d)) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// openDataset opens one of the shared real data sets, skipping the test when
// this checkout does not have them.
func openDataset(t *testing.T, name string) *os.File {
	t.Helper()
	p, ok := shareddata.Path(name)
	if !ok {
		t.Skipf("real data set %s not found (expected at %s): skipping", name, p)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseRealDatasets(t *testing.T) {
	tests := []struct {
		file        string
		wantRows    int
		wantColumns []string // a subset, in order
		wantLast    Record   // a few values of the last record
	}{
		{"fed-dialog.jsonl", 125, []string{"id", "system", "context", "scores.Coherent", "scores.Error recovery", "scores.Overall"},
			Record{Line: 125, Values: map[string]string{"id": "fed-124"}}},
		{"topical-chat-usr.jsonl", 360, []string{"id", "context_id", "context", "history", "fact", "system_id", "response", "scores.understandability", "scores.overall"},
			Record{Line: 360, Values: map[string]string{"id": "tc-359", "context_id": "ctx-59"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := openDataset(t, tt.file)
			head := make([]byte, 512)
			n, _ := f.Read(head)
			format, err := DetectFormat(tt.file, head[:n])
			if err != nil || format != JSONL {
				t.Fatalf("DetectFormat = %q, %v; want jsonl", format, err)
			}
			if _, err := f.Seek(0, 0); err != nil {
				t.Fatal(err)
			}
			table, err := Parse(f, format, Options{})
			if err != nil {
				t.Fatalf("Parse error: %v", err)
			}
			if got := len(table.Records); got != tt.wantRows {
				t.Errorf("got %d records, want %d", got, tt.wantRows)
			}
			i := 0
			for _, c := range table.Columns {
				if i < len(tt.wantColumns) && c == tt.wantColumns[i] {
					i++
				}
			}
			if i != len(tt.wantColumns) {
				t.Errorf("Columns = %q, want %q among them in that order", table.Columns, tt.wantColumns)
			}
			last := table.Records[len(table.Records)-1]
			if last.Line != tt.wantLast.Line {
				t.Errorf("last record line = %d, want %d", last.Line, tt.wantLast.Line)
			}
			for k, want := range tt.wantLast.Values {
				if got := last.Values[k]; got != want {
					t.Errorf("last record %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestParseColumnLimits: a file with thousands of distinct keys, or with a
// huge column name, is refused with a message, so the mapping page (which
// lists every column) stays small. The message points at the header (line
// 1) of a CSV file, and at the line or item where the key first appears in
// JSON, naming it.
func TestParseColumnLimits(t *testing.T) {
	var many strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&many, "{\"id\":%d,\"key_%d\":\"v\"}\n", i, i)
	}
	var wide []string
	for i := range 501 {
		wide = append(wide, fmt.Sprintf("c%d", i))
	}
	wideHeader := strings.Join(wide, ",") + "\n"
	wideRow := strings.Repeat("x,", 500) + "x\n"
	long := strings.Repeat("n", 5000)
	longName := "id," + long + "\n1,x\n"
	tests := []struct {
		name, input string
		f           Format
		opt         Options
		wantErr     string
		wantLine    int
		wantItem    bool
	}{
		{"thousands of keys", many.String(), JSONL, Options{}, `line 500: the key “key_499” first appears here and would be column 501; the file has more than 500 different columns`, 500, false},
		{"thousands of keys in an array", "[" + strings.ReplaceAll(strings.TrimSuffix(many.String(), "\n"), "\n", ",\n") + "]", JSON, Options{},
			`item 500: the key “key_499” first appears here and would be column 501`, 500, true},
		{"a lower limit", "a,b,c\n1,2,3\n", CSV, Options{MaxColumns: 2}, "the header has 3 columns; the file has more than 2 different columns", 1, false},
		{"501 columns", wideHeader + wideRow, CSV, Options{}, "line 1: the header has 501 columns; the file has more than 500 different columns", 1, false},
		{"501 columns, header only", wideHeader, CSV, Options{}, "line 1: the header has 501 columns", 1, false},
		{"501 columns without a header", wideRow + wideRow, CSV, Options{NoHeader: true}, "line 1: the first row has 501 columns", 1, false},
		{"a huge column name", longName, CSV, Options{}, `line 1: column 2 of the header, named “nnnn`, 1, false},
		{"a huge column name's length", longName, CSV, Options{}, "is 5000 characters long; column names may be up to 200", 1, false},
		{"a column name of 201", "id," + strings.Repeat("n", 201) + "\n1,x\n", CSV, Options{}, "line 1: column 2 of the header", 1, false},
		{"a huge key", "{\"id\":1}\n{\"id\":2,\"" + long + "\":1}\n", JSONL, Options{}, `line 2: the key “nnnn`, 2, false},
		{"at the limits", "id," + strings.Repeat("n", 200) + "\n1,x\n", CSV, Options{}, "", 0, false},
		{"500 columns", strings.Join(wide[:500], ",") + "\n" + strings.Repeat("x,", 499) + "x\n", CSV, Options{}, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.input), tt.f, tt.opt)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want it to say %q", err, tt.wantErr)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tt.wantLine || pe.Item != tt.wantItem {
				t.Errorf("Parse error = %#v, want Line %d, Item %v", err, tt.wantLine, tt.wantItem)
			}
		})
	}
}
