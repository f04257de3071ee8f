package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestDatasetExportRatingsRoundTripDecimalComma: a file with semicolons
// and decimal commas (a rating of "2,5", read as 2.5) is exported with its
// rating columns' numbers as the product read them: a decimal point in the
// comma-separated file, as every other number there, and a decimal comma
// in the ?excel=semicolon file. A rating column's text ("N/A") and a text
// column ("2,5 of 5", "3,5") are written as uploaded. Each export imported
// again gives the same ratings. On the old code the comma-separated file
// held the upload's "2,5", which its import refused (not a number).
func TestDatasetExportRatingsRoundTripDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = "\uFEFFid;response;quality;note\r\n" +
			"s1;Paris is the capital.;2,5;2,5 of 5\r\n" +
			"s2;Eight legs.; 4 ;3,5\r\n" +
			"s3;Shakespeare.;N/A;not rated\r\n" +
			"s4;No idea.;-0,75;\r\n"
		// Columns: 0 id, 1 response (shown), 2 quality (a rating), 3 note.
		mapping := func(token, name string) url.Values {
			return url.Values{"token": {token}, "name": {name}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Response"}, "rating_2": {"1"}}
		}
		importFile := func(t *testing.T, filename, content, name string) map[string]*float64 {
			t.Helper()
			rec := env.postForm(env.mapPath(), mapping(env.uploadToken(filename, content), name))
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import of %s = %d: %s", filename, rec.Code, rec.Body)
			}
			ds := env.lastDataset()
			rows, err := env.db.ListDatasetRows(context.Background(), ds.ID, 0, 0)
			must(t, err)
			got := map[string]*float64{}
			for _, r := range rows {
				got[r.ExternalID] = r.Ratings["quality"]
			}
			return got
		}
		show := func(m map[string]*float64) string {
			out := ""
			for _, id := range []string{"s1", "s2", "s3", "s4"} {
				if v := m[id]; v != nil {
					out += fmt.Sprintf("%s=%g ", id, *v)
				} else {
					out += id + "=none "
				}
			}
			return out
		}
		uploaded := importFile(t, "excel.csv", file, "Decimal commas")
		if want := "s1=2.5 s2=4 s3=none s4=-0.75 "; show(uploaded) != want {
			t.Fatalf("the upload's ratings are %s, want %s", show(uploaded), want)
		}
		dsID := env.lastDataset().ID

		tests := []struct {
			name, query string
			comma       rune
			// quality and note are each sample's cells, as written.
			quality, note []string
		}{
			{"comma-separated", "", ',', []string{"2.5", "4", "N/A", "-0.75"}, []string{"2,5 of 5", "3,5", "not rated", ""}},
			{"for Excel with decimal commas", "?excel=semicolon", ';', []string{"2,5", "4", "N/A", "-0,75"}, []string{"2,5 of 5", "3,5", "not rated", ""}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.get(fmt.Sprintf("/datasets/%d/export.csv%s", dsID, tt.query))
				if rec.Code != http.StatusOK {
					t.Fatalf("export = %d: %s", rec.Code, rec.Body)
				}
				body := rec.Body.Bytes()
				r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\uFEFF"))))
				r.Comma = tt.comma
				lines, err := r.ReadAll()
				if err != nil {
					t.Fatalf("the export does not read with %q between cells: %v\n%s", tt.comma, err, body)
				}
				if len(lines) != 5 || len(lines[0]) < 4 || lines[0][2] != "quality" || lines[0][3] != "note" {
					t.Fatalf("export: %q", lines)
				}
				for i, line := range lines[1:] {
					if line[2] != tt.quality[i] || line[3] != tt.note[i] {
						t.Errorf("sample %s: quality %q, note %q; want %q, %q", line[0], line[2], line[3], tt.quality[i], tt.note[i])
					}
				}
				again := importFile(t, "export.csv", string(body), "Imported again "+tt.name)
				if show(again) != show(uploaded) {
					t.Errorf("imported again, the ratings are %s; uploaded, %s", show(again), show(uploaded))
				}
			})
		}
	})
}
