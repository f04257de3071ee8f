package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestMappingPageReadsOnlyTheUploadsHead: the mapping page after an upload
// shows the whole file's row count, which it counted by reading the whole
// file again on each view (0.54 s at a million rows). The upload's own pass
// now keeps the count, the skipped lines and every column, and the page
// reads the file's first sampleRows records only. The page must be what the
// whole read gave (checked against the same upload with its kept scan
// cleared, which is read whole as uploads stored before it are), and must
// still be shown, the same, once every stored part past the first (1 MiB)
// is gone, which a whole read cannot survive. A JSONL file whose last
// record brings a column of its own keeps that column. The first row read
// as data (header=none) was not counted at upload: it is read whole.
func TestMappingPageReadsOnlyTheUploadsHead(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads files of several MiB")
	}
	n := sampleRows*7 + 17
	pad := strings.Repeat("x", 20) // the first sampleRows rows fit in the first part
	var csv, jsonl strings.Builder
	csv.WriteString("id,text,score\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "s%d,row %d %s,%d\n", i, i, pad, i%5+1)
		if i%1000 == 0 {
			csv.WriteString("\n") // a skipped line, which the page counts too
		}
		late := ""
		if i == n {
			late = `,"late_column":"only here"`
		}
		fmt.Fprintf(&jsonl, `{"id":"s%d","text":"row %d %s","score":%d%s}`+"\n", i, i, pad, i%5+1, late)
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			name, file, content string
			rows                int
			want                []string
		}{
			{"csv", "big.csv", csv.String(), n, []string{fmt.Sprintf("%d rows", n)}},
			{"jsonl with a late column", "big.jsonl", jsonl.String(), n, []string{fmt.Sprintf("%d rows", n), "late_column"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				token := env.uploadToken(tc.file, tc.content)
				var id int64
				if err := env.db.Gorm.Raw("SELECT id FROM pending_uploads WHERE token = ?", token).Scan(&id).Error; err != nil || id == 0 {
					t.Fatalf("upload %s not found: %v", token, err)
				}
				page := func(q url.Values) string {
					t.Helper()
					q.Set("token", token)
					rec := env.get(env.mapPath() + "?" + q.Encode())
					if rec.Code != http.StatusOK {
						t.Fatalf("mapping page %v = %d: %s", q, rec.Code, mainText(rec.Body.String()))
					}
					return rec.Body.String()
				}
				kept := page(url.Values{})
				for _, w := range tc.want {
					if !strings.Contains(html.UnescapeString(kept), w) {
						t.Errorf("the mapping page does not say %q", w)
					}
				}
				var scan *string
				env.db.Gorm.Raw("SELECT scan FROM pending_uploads WHERE id = ?", id).Scan(&scan)
				if scan == nil {
					t.Error("the upload kept no scan")
				}
				var asData string
				if tc.file == "big.csv" {
					asData = page(url.Values{"header": {"none"}})
					if want := fmt.Sprintf("%d rows", n+1); !strings.Contains(asData, want) {
						t.Errorf("with the first row as data the page does not say %q", want)
					}
				}
				// Read whole, as an upload stored before the scan was kept.
				env.db.Gorm.Exec("UPDATE pending_uploads SET scan = NULL WHERE id = ?", id)
				whole := page(url.Values{})
				if whole != kept {
					t.Errorf("the page from the kept scan differs from the page of the whole file:\n%s", firstDifference(kept, whole))
				}
				if scan != nil {
					env.db.Gorm.Exec("UPDATE pending_uploads SET scan = ? WHERE id = ?", *scan, id)
				}
				var parts int64
				env.db.Gorm.Raw("SELECT COUNT(*) FROM pending_upload_parts WHERE upload_id = ?", id).Scan(&parts)
				if parts < 3 {
					t.Fatalf("the upload is stored in %d parts; the test needs at least 3", parts)
				}
				env.db.Gorm.Exec("DELETE FROM pending_upload_parts WHERE upload_id = ? AND seq > 0", id)
				if head := page(url.Values{}); head != kept {
					t.Errorf("with only the first part left the page changed (it read past the file's first rows):\n%s", firstDifference(kept, head))
				}
			})
		}
	})
}

// mainText is a page's main element, the part that says what went wrong.
func mainText(page string) string {
	if _, rest, ok := strings.Cut(page, "<main"); ok {
		page, _, _ = strings.Cut(rest, "</main>")
	}
	return page[:min(len(page), 800)]
}
