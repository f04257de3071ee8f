package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUploadWindows1252PastTheStart: an old Excel CSV (Windows-1252) whose
// rows are ASCII past the first 64 KiB and past the rows the mapping page
// reads again (sampleRows), its first é on the last row, was refused at
// upload ("not valid UTF-8 (byte 0xE9)"). It uploads, the mapping page
// says it was read as Windows-1252 (the upload's scan keeps the whole
// file's encoding), and it imports with the é as written. A UTF-8 file
// with a Windows-1252 byte further on is refused at upload naming the line
// and what to do, nothing kept.
func TestUploadWindows1252PastTheStart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var b strings.Builder
		b.WriteString("id,answer,quality\r\n")
		rows := sampleRows + 10
		for i := range rows - 1 {
			fmt.Fprintf(&b, "s%d,Plain answer number %d,%d\r\n", i, i, i%5+1)
		}
		ascii := b.String()
		const note = "The file was read as Windows-1252 text (not UTF-8)."
		token := env.uploadToken("old.csv", ascii+"last,Caf\xE9 cr\xE8me,3\r\n")
		page := html.UnescapeString(env.get(env.mapPath() + "?" + url.Values{"token": {token}}.Encode()).Body.String())
		if !strings.Contains(page, note) {
			t.Errorf("the mapping page does not say %q", note)
		}
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Old"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Answer"}, "rating_2": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d, want 303: %.1000s", rec.Code, rec.Body)
		}
		ds := env.lastDataset()
		if len(ds.ImportNotes) == 0 || !strings.HasPrefix(ds.ImportNotes[0], note) {
			t.Errorf("import notes %q, want %q first", ds.ImportNotes, note)
		}
		last, err := env.db.ListDatasetRows(context.Background(), ds.ID, rows-1, 1)
		if err != nil || len(last) != 1 || last[0].Data["answer"] != "Café crème" {
			t.Errorf("last row %+v (%v), want answer Café crème", last, err)
		}

		mixed := env.upload("mixed.csv", ascii+"u,Café,2\r\nw,Caf\xE9,3\r\n", "")
		body := html.UnescapeString(mixed.Body.String())
		line := fmt.Sprintf("line %d", rows+2)
		if mixed.Code != http.StatusUnprocessableEntity || !strings.Contains(body, line) || !strings.Contains(body, "not valid UTF-8") || !strings.Contains(body, "CSV UTF-8") {
			t.Errorf("mixed file = %d, want 422 naming %s and what to do: %.600s", mixed.Code, line, body)
		}
		var n int64
		env.db.Gorm.Raw("SELECT COUNT(*) FROM pending_uploads").Scan(&n)
		if n != 0 {
			t.Errorf("%d pending uploads kept", n)
		}
	})
}
