package dataimport

import (
	"maps"
	"strings"
	"testing"
)

// Excel for Mac's "CSV (Macintosh)" ends its lines with a carriage return
// alone: the whole file was read as its header ("the file has no rows,
// only a header"). Its lines are now read as lines; a carriage return
// inside double quotes stays in the text, and a bad row is named by its
// line.
func TestCarriageReturnLineEnds(t *testing.T) {
	tests := []struct {
		name, file string
		noHeader   bool
		rows       []map[string]string
		lines      []int
		err        string
	}{
		{"mac csv", "id,answer,rating\rs1,\"Yes, \"\"sure\"\"\rreally\",4\rs2,No,5\r", false,
			[]map[string]string{{"id": "s1", "answer": "Yes, \"sure\"\rreally", "rating": "4"}, {"id": "s2", "answer": "No", "rating": "5"}}, []int{2, 3}, ""},
		{"no final line end, semicolons", "id;answer\rs1;Oui, merci\rs2;Non", false,
			[]map[string]string{{"id": "s1", "answer": "Oui, merci"}, {"id": "s2", "answer": "Non"}}, []int{2, 3}, ""},
		{"no header", "s1,a\rs2,b\r", true,
			[]map[string]string{{"column_1": "s1", "column_2": "a"}, {"column_1": "s2", "column_2": "b"}}, []int{1, 2}, ""},
		{"a bad row is named", "id,answer\rs1,a\rs2,b,c\r", false, nil, nil, "line 3: this row has 3 fields but the header has 2 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.file), CSV, Options{NoHeader: tt.noHeader})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Parse: %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(table.Records) != len(tt.rows) {
				t.Fatalf("%d records, want %d: %+v", len(table.Records), len(tt.rows), table.Records)
			}
			for i, rec := range table.Records {
				if !maps.Equal(rec.Values, tt.rows[i]) || rec.Line != tt.lines[i] {
					t.Errorf("record %d = %q on line %d, want %q on line %d", i+1, rec.Values, rec.Line, tt.rows[i], tt.lines[i])
				}
			}
		})
	}
}
