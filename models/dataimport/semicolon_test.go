package dataimport

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// European-locale Excel saves "CSV" with ';' between fields and decimal
// commas in numbers; such files were refused ("the header contains ';'").
func TestParseSemicolonSeparated(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		opt     Options
		columns []string
		rows    []map[string]string
	}{
		{
			name:    "excel export: BOM, CRLF, quoted semicolon and comma, decimal commas kept as written",
			input:   "\xEF\xBB\xBFid;answer;rating\r\n1;\"Bonjour; ça va\";3,5\r\n2;\"oui, merci\";-0,25\r\n3;\"sur\r\ndeux lignes\";4\r\n",
			columns: []string{"id", "answer", "rating"},
			rows: []map[string]string{
				{"id": "1", "answer": "Bonjour; ça va", "rating": "3,5"},
				{"id": "2", "answer": "oui, merci", "rating": "-0,25"},
				{"id": "3", "answer": "sur\ndeux lignes", "rating": "4"},
			},
		},
		{
			name:    "quoted header names with commas",
			input:   "\"id, external\";\"text\"\n1;a,b\n",
			columns: []string{"id, external", "text"},
			rows:    []map[string]string{{"id, external": "1", "text": "a,b"}},
		},
		{
			name:    "text cells kept as written",
			input:   "id;text\n1;3,5 stars\n2;1,2,3\n",
			columns: []string{"id", "text"},
			rows:    []map[string]string{{"id": "1", "text": "3,5 stars"}, {"id": "2", "text": "1,2,3"}},
		},
		{
			name:    "first row is data",
			input:   "1;hello;2,5\r\n",
			opt:     Options{NoHeader: true},
			columns: []string{"column_1", "column_2", "column_3"},
			rows:    []map[string]string{{"column_1": "1", "column_2": "hello", "column_3": "2,5"}},
		},
		{
			// A semicolon inside quotes of a comma-separated header, or
			// in its data, does not make the file semicolon-separated.
			name:    "comma-separated with semicolons in quotes and data",
			input:   "id,\"a;b\"\n1,x;y\n2,\"3,5\"\n",
			columns: []string{"id", "a;b"},
			rows:    []map[string]string{{"id": "1", "a;b": "x;y"}, {"id": "2", "a;b": "3,5"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.input), CSV, tt.opt)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if strings.Join(table.Columns, "|") != strings.Join(tt.columns, "|") {
				t.Errorf("columns = %q, want %q", table.Columns, tt.columns)
			}
			if len(table.Records) != len(tt.rows) {
				t.Fatalf("%d records, want %d", len(table.Records), len(tt.rows))
			}
			for i, want := range tt.rows {
				if !maps.Equal(table.Records[i].Values, want) {
					t.Errorf("record %d = %q, want %q", i+1, table.Records[i].Values, want)
				}
			}
		})
	}
}

// A semicolon-separated file's decimal-comma ratings are suggested as a
// rating column and imported as numbers.
func TestSemicolonRatingsImported(t *testing.T) {
	input := "\xEF\xBB\xBFid;answer;rating\r\n1;Il fait beau aujourd'hui à Paris.;3,5\r\n2;Je ne sais pas.;1,0\r\n3;Oui.;\r\n"
	table, err := Parse(strings.NewReader(input), CSV, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	m := SuggestMapping(table)
	if len(m.RatingColumns) != 1 || m.RatingColumns[0] != "rating" {
		t.Fatalf("suggested ratings %q, want [rating]", m.RatingColumns)
	}
	rows, err := table.Apply(Mapping{IDColumn: "id", Fields: m.Fields, RatingColumns: []string{"rating"}})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []float64{3.5, 1}
	for i, w := range want {
		if got := rows[i].Ratings["rating"]; got == nil || *got != w {
			t.Errorf("row %d rating = %v, want %v", i+1, got, w)
		}
	}
	if rows[2].Ratings["rating"] != nil {
		t.Errorf("row 3 rating = %v, want unrated", *rows[2].Ratings["rating"])
	}
}

// In a semicolon-separated file the decimal comma is read only where a
// number is: a rating. Ids and the texts the judge reads are kept as
// written (they were rewritten "3,5" -> "3.5", so a text that was exactly
// a number, or an id such as "1,2", changed).
func TestSemicolonDecimalCommaOnlyInRatings(t *testing.T) {
	input := "id;question;answer;rating;note\r\n1,2;Combien font 7 / 2 ?;3,5;4,5;1,0\r\n2,1;Et 1 / 4 ?;0,25;-0,5;\r\n3;Et 2 / 1 ?;2;3;+2,5\r\n"
	table, err := Parse(strings.NewReader(input), CSV, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	m := SuggestMapping(table)
	if !slices.Contains(m.RatingColumns, "rating") || !slices.Contains(m.RatingColumns, "note") {
		t.Errorf("suggested ratings %q, want rating and note among them", m.RatingColumns)
	}
	if why := WhyNotRating(table, "rating"); why != "" {
		t.Errorf("WhyNotRating(rating) = %q, want none", why)
	}
	rows, err := table.Apply(Mapping{IDColumn: "id",
		Fields:        []evaluator.Field{{Column: "question", Label: "Question"}, {Column: "answer", Label: "Answer"}},
		RatingColumns: []string{"rating", "note"}})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	tests := []struct {
		id, question, answer string
		rating, note         *float64
	}{
		{"1,2", "Combien font 7 / 2 ?", "3,5", ptr(4.5), ptr(1)},
		{"2,1", "Et 1 / 4 ?", "0,25", ptr(-0.5), nil},
		{"3", "Et 2 / 1 ?", "2", ptr(3), ptr(2.5)},
	}
	for i, tt := range tests {
		r := rows[i]
		if r.ExternalID != tt.id || r.Data["question"] != tt.question || r.Data["answer"] != tt.answer || r.Data["id"] != tt.id {
			t.Errorf("row %d: id %q, data %q; want id %q, question %q, answer %q", i+1, r.ExternalID, r.Data, tt.id, tt.question, tt.answer)
		}
		for col, want := range map[string]*float64{"rating": tt.rating, "note": tt.note} {
			got := r.Ratings[col]
			if (got == nil) != (want == nil) || (got != nil && *got != *want) {
				t.Errorf("row %d %s = %v, want %v", i+1, col, deref(got), deref(want))
			}
		}
	}
	// A comma-separated file has no decimal comma: "3,5" quoted in it is
	// not a number.
	comma, err := Parse(strings.NewReader("id,rating\n1,\"3,5\"\n"), CSV, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := comma.Apply(Mapping{IDColumn: "id", Fields: []evaluator.Field{{Column: "id", Label: "Id"}}, RatingColumns: []string{"rating"}}); err == nil || !strings.Contains(err.Error(), "write decimals with a dot: 3.5") {
		t.Errorf("comma-separated \"3,5\" rating: err = %v, want the advice to write 3.5", err)
	}
}

func ptr(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A file without a header whose first row has a comma in its text, from
// European Excel (';' between fields): it was read as comma-separated and
// its second row refused with advice to quote fields containing commas
// (wrong: the commas are text), or "the header has" though there is none.
func TestSemicolonNoHeaderCommaInText(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		columns int      // with no error
		want    []string // in the error, when one is expected
		notWant string
	}{
		{
			name:    "semicolons on every row, commas in text vary",
			input:   "1;Bonjour, ça va ?;4\r\n2;Oui;3,5\r\n3;\"Non; merci\";2\r\n",
			columns: 3,
		},
		{
			name:    "quoted line break keeps the count",
			input:   "1;\"Bonjour,\nça va\";4\n2;Oui, bien;3\n3;Non;2\n",
			columns: 3,
		},
		{
			// The semicolons vary too: an unquoted one in a text.
			name:    "semicolon in a text, unquoted",
			input:   "1;Bonjour, ça va;4\n2;Oui; merci;3\n",
			want:    []string{"line 2:", "the first row has 2", "both commas and semicolons", "contains a comma or a semicolon in double quotes"},
			notWant: "header",
		},
		{
			// A comma-separated file whose first row has a semicolon
			// in its text reads as before.
			name:    "comma-separated, semicolon in text",
			input:   "1,Hello; world,4\n2,Hi,3\n",
			columns: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.input), CSV, Options{NoHeader: true})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(table.Columns) != tt.columns {
					t.Errorf("columns %q, want %d", table.Columns, tt.columns)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse read %q, want an error", table.Columns)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error %q, want no %q", err, tt.notWant)
			}
		})
	}
}

// Excel reads, and some exports write, a first line "sep=;" naming the
// separator: it was read as the header ("sep=" and an unnamed column), and
// the next line refused with "this row has 3 fields but the header has 2
// columns".
func TestExcelSepLine(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		opt     Options
		columns string
		first   map[string]string
		line    int    // of the first record
		err     string // "" for none
	}{
		{"semicolon", "sep=;\r\nid;answer;rating\r\n1;Oui, merci;3,5\r\n", Options{}, "id|answer|rating", map[string]string{"id": "1", "answer": "Oui, merci", "rating": "3,5"}, 3, ""},
		{"comma, byte order mark", "\xEF\xBB\xBFSEP=,\nid,answer\n1,a;b\n", Options{}, "id|answer", map[string]string{"id": "1", "answer": "a;b"}, 3, ""},
		{"no header", "sep=;\n1;Bonjour, ça va\n", Options{NoHeader: true}, "column_1|column_2", map[string]string{"column_1": "1", "column_2": "Bonjour, ça va"}, 2, ""},
		{"a column named sep=x", "sep=x,y\n1,2\n", Options{}, "sep=x|y", map[string]string{"sep=x": "1", "y": "2"}, 2, ""},
		{"tab", "sep=\t\nid\tanswer\n1\ta, b; c\n", Options{}, "id|answer", map[string]string{"id": "1", "answer": "a, b; c"}, 3, ""},
		{"pipe", "sep=|\nid|answer\n", Options{}, "", nil, 0, `line 1: the first line (sep=|) names “|” as the separator; only commas, semicolons and tabs are accepted`},
		{"error lines count the sep line", "sep=;\nid;answer\n1;a\n2\n", Options{}, "", nil, 0, "line 4: this row has 1 field but the header has 2 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var skipped int
			table := &Table{}
			sum, err := Scan(strings.NewReader(tt.input), CSV, tt.opt, func(rec Record) error {
				rec.Values = maps.Clone(rec.Values)
				table.Records = append(table.Records, rec)
				return nil
			})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Scan: %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			skipped = sum.Skipped
			if got := strings.Join(sum.Columns, "|"); got != tt.columns {
				t.Errorf("columns %q, want %q", got, tt.columns)
			}
			if len(table.Records) == 0 || !maps.Equal(table.Records[0].Values, tt.first) || table.Records[0].Line != tt.line {
				t.Errorf("records %+v, want the first %q on line %d", table.Records, tt.first, tt.line)
			}
			if skipped != 0 {
				t.Errorf("%d lines skipped, want none (the sep line is not an empty line)", skipped)
			}
		})
	}
}
