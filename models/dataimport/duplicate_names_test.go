package dataimport

import (
	"slices"
	"strings"
	"testing"
)

// A header with two columns of the same name, as spreadsheets allow (two
// "Comment" columns), was refused: "columns 3 and 4 have the same name:
// column names must be unique". The later column is now named with its
// count, "Comment (2)", keeping both columns' cells, and Renamed says so.
// A repeated number is still refused: that row is more likely data.
func TestDuplicateColumnNames(t *testing.T) {
	tests := []struct {
		name, file string
		columns    []string
		renamed    int
		err        string
	}{
		{"two comments", "id,answer,Comment,Comment\ns1,Yes,first,second\n", []string{"id", "answer", "Comment", "Comment (2)"}, 1, ""},
		{"three, and a taken name", "id,note,note (2),note, note \ns1,a,b,c,d\n", []string{"id", "note", "note (2)", "note (3)", "note (4)"}, 2, ""},
		{"tab-separated", "id\tanswer\tanswer\ns1\tx\ty\n", []string{"id", "answer", "answer (2)"}, 1, ""},
		{"a repeated number", "s1,4,4\ns2,3,5\n", nil, 0, `line 1, column “4”: columns 2 and 3 have the same name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(strings.NewReader(tt.file), CSV, Options{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Parse: %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !slices.Equal(table.Columns, tt.columns) {
				t.Errorf("columns %q, want %q", table.Columns, tt.columns)
			}
			last := tt.columns[len(tt.columns)-1]
			if got := table.Records[0].Values[last]; got == "" || got == table.Records[0].Values[tt.columns[len(tt.columns)-2]] {
				t.Errorf("column %q holds %q: the renamed column lost its own cells", last, got)
			}
			if len(table.Renamed) != tt.renamed || !strings.Contains(table.Renamed[len(table.Renamed)-1], "is named “"+last+"”") {
				t.Errorf("renamed %q, want %d saying %q", table.Renamed, tt.renamed, last)
			}
		})
	}
}
