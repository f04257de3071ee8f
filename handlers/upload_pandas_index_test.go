package handlers

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUploadPandasIndex: a CSV written by pandas' DataFrame.to_csv (its
// row index as a first column without a name) was refused at upload; it
// now maps and imports without that column, and the mapping page and the
// import notes say the index was left out.
func TestUploadPandasIndex(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("frame.csv", ",id,answer,rating\n0,s1,Yes,4\n1,s2,No,2\n")
		page := env.get(env.mapPath() + "?" + url.Values{"token": {token}}.Encode())
		if page.Code != http.StatusOK || !strings.Contains(html.UnescapeString(page.Body.String()), "a row index as pandas writes one") {
			t.Fatalf("mapping page (%d) does not say the row index is left out", page.Code)
		}
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Frame"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Answer"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d, want 303: %s", rec.Code, rec.Body)
		}
		ds := env.lastDataset()
		if !strings.Contains(strings.Join(ds.ImportNotes, " "), "row index") {
			t.Errorf("import notes %q do not say the row index was left out", ds.ImportNotes)
		}
		rows, err := env.db.ListDatasetRows(context.Background(), ds.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].ExternalID != "s1" || rows[1].Data["answer"] != "No" {
			t.Errorf("rows %+v", rows)
		}
		for _, c := range ds.Columns {
			if c == "" {
				t.Errorf("columns %q hold one without a name", ds.Columns)
			}
		}
	})
}
