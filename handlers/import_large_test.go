package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestImportPastTheSampleReportsWholeFile: an import reads only the first
// sampleRows records before it starts (the import itself reads the whole
// file), so a refused import must still show the whole file's row count,
// and a repeated id found past the sample names both of its lines. Rows
// go in chunks of 64 here, to cross many chunk boundaries.
func TestImportPastTheSampleReportsWholeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("imports about 10,000 rows")
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.db.ImportChunkRows = 64
		n := sampleRows + 50
		file := func(repeatFirst bool) string {
			var b strings.Builder
			b.WriteString("id,text,score\n")
			for i := 1; i <= n; i++ {
				id := fmt.Sprintf("s%d", i)
				if repeatFirst && i == n {
					id = "s1" // line 2 holds s1
				}
				fmt.Fprintf(&b, "%s,text of row %d,%d\n", id, i, i%5+1)
			}
			return b.String()
		}
		form := func(token string) url.Values {
			return url.Values{"token": {token}, "name": {"Past the sample"}, "id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}}
		}
		for _, tc := range []struct {
			name   string
			repeat bool
		}{{"repeated id on the last line", true}, {"clean file", false}} {
			t.Run(tc.name, func(t *testing.T) {
				var rowsBefore, rowsAfter int64
				env.db.Gorm.Table("dataset_rows").Count(&rowsBefore)
				rec := env.postForm(env.mapPath(), form(env.uploadToken("big.csv", file(tc.repeat))))
				env.db.Gorm.Table("dataset_rows").Count(&rowsAfter)
				if !tc.repeat {
					if rec.Code != http.StatusSeeOther || rowsAfter-rowsBefore != int64(n) {
						t.Fatalf("POST map = %d, stored %d rows; want 303 and %d: %.1000s", rec.Code, rowsAfter-rowsBefore, n, rec.Body)
					}
					return
				}
				body := html.UnescapeString(rec.Body.String())
				wantProblem := fmt.Sprintf(`<td>line %d</td><td>id</td><td>the id “s1” is also used on line 2`, n+1)
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, wantProblem) {
					t.Fatalf("POST map = %d, want 422 with %q:\n%.3000s", rec.Code, wantProblem, body)
				}
				if want := fmt.Sprintf("%d rows", n); !strings.Contains(body, want) {
					t.Errorf("the mapping page does not say %q (the whole file's count)", want)
				}
				if rowsAfter != rowsBefore {
					t.Errorf("a refused import stored %d rows", rowsAfter-rowsBefore)
				}
			})
		}
	})
}

// TestRefusedUploadStoresNothing: the upload's check of the file runs
// beside the storing of it; a file the check refuses, at its start or
// after megabytes of good rows, must leave no pending upload and no stored
// part behind.
func TestRefusedUploadStoresNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		good := strings.Repeat("s,a fine row of text that pads the file to several parts,3\n", 60000) // about 3.5 MB
		for _, tc := range []struct{ name, content string }{
			{"broken at the start", "id,text,score\ns1,\"open quote,3\n" + good},
			{"broken after 3 MB", "id,text,score\n" + good + "s2,too,many,fields\n"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.upload("broken.csv", tc.content, "")
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cannot be imported") {
					t.Fatalf("upload = %d, want 422 saying the file cannot be imported: %.500s", rec.Code, rec.Body)
				}
				var uploads, parts int64
				env.db.Gorm.Table("pending_uploads").Count(&uploads)
				env.db.Gorm.Table("pending_upload_parts").Count(&parts)
				if uploads != 0 || parts != 0 {
					t.Errorf("a refused upload left %d uploads and %d parts", uploads, parts)
				}
			})
		}
	})
}
