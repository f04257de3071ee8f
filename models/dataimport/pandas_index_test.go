package dataimport

import (
	"strings"
	"testing"
)

// TestPandasIndexColumnLeftOut: DataFrame.to_csv writes its row index as a
// first column without a name (",id,answer" then "0,s1,..."), the most
// common CSV a data scientist uploads; it was refused ("column 1 has no
// name in the header row but holds "0""). Whole numbers in such a first
// column are left out, with a note; text there is refused as before, and
// an unnamed column elsewhere is unchanged.
func TestPandasIndexColumnLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		cols     []string
		rows     int
		note     bool
		err      string
	}{
		{"pandas index", ",id,answer,rating\n0,s1,Hello there.,4\n1,s2,\"Fine, thanks.\",3\n2,s3,Bye.,\n", []string{"id", "answer", "rating"}, 3, true, ""},
		{"index with trailing empty row", ",id,answer\n0,s1,a\n1,s2,b\n,,\n", []string{"id", "answer"}, 2, true, ""},
		{"text in the unnamed first column", ",id,answer\n0,s1,a\nnote,s2,b\n", nil, 0, false, `line 3: column 1 has no name in the header row but holds “note”`},
		{"unnamed middle column still refused", "id,,answer\ns1,7,a\n", nil, 0, false, `line 2: column 2 has no name in the header row but holds “7”`},
		{"empty unnamed first column", ",id,answer\n,s1,a\n", []string{"id", "answer"}, 1, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tc.in), CSV, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(tab.Columns, "|") != strings.Join(tc.cols, "|") || len(tab.Records) != tc.rows {
				t.Fatalf("columns %q, %d rows; want %q, %d", tab.Columns, len(tab.Records), tc.cols, tc.rows)
			}
			if v := tab.Records[0].Values; v["id"] != "s1" || v["answer"] == "" {
				t.Errorf("first row %q, want id s1 and its answer (columns shifted?)", v)
			}
			noted := strings.Contains(strings.Join(tab.Renamed, " "), "row index")
			if noted != tc.note {
				t.Errorf("notes %q: row index note %v, want %v", tab.Renamed, noted, tc.note)
			}
		})
	}
}
