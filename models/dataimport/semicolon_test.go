package dataimport

import (
	"maps"
	"strings"
	"testing"
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
			name:    "excel export: BOM, CRLF, quoted semicolon and comma, decimal commas",
			input:   "\xEF\xBB\xBFid;answer;rating\r\n1;\"Bonjour; ça va\";3,5\r\n2;\"oui, merci\";-0,25\r\n3;\"sur\r\ndeux lignes\";4\r\n",
			columns: []string{"id", "answer", "rating"},
			rows: []map[string]string{
				{"id": "1", "answer": "Bonjour; ça va", "rating": "3.5"},
				{"id": "2", "answer": "oui, merci", "rating": "-0.25"},
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
			// Only a number with a decimal comma is rewritten.
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
			rows:    []map[string]string{{"column_1": "1", "column_2": "hello", "column_3": "2.5"}},
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
