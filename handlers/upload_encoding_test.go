package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// TestUploadExcelUnicodeTextAndWindows1252: Excel's "Unicode Text" (UTF-16
// with a byte order mark, tab-separated, saved as .txt) was refused ("files
// ending in .txt are not accepted", and as .csv "the file is UTF-16
// encoded"), and an older Excel's "CSV" in Windows-1252 was refused at its
// first é. Both upload, map and import with their texts as written; the
// mapping page and the dataset's import notes say how the file was read.
func TestUploadExcelUnicodeTextAndWindows1252(t *testing.T) {
	utf16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(
		"id\tanswer\tquality\r\n" +
			"q1\t\"Tab\there, \"\"quoted\"\"\nand a second line\"\t4,5\r\n" +
			"q2\tCafé ’ 日本語\t2\r\n")
	if err != nil {
		t.Fatal(err)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().String(
		"id,answer,quality\r\nq1,\"Tab\there, \"\"quoted\"\"\nand a second line\",4.5\r\nq2,Café ’ déjà,2\r\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filename, file, note, second string
	}{
		{"utf-16 tsv", "Book1.txt", utf16, "The file was read as UTF-16 text, tab-separated.", "Café ’ 日本語"},
		{"windows-1252 csv", "old.csv", cp1252, "The file was read as Windows-1252 text (not UTF-8).", "Café ’ déjà"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				token := env.uploadToken(tt.filename, tt.file)
				page := env.get(env.mapPath() + "?" + url.Values{"token": {token}}.Encode())
				if !strings.Contains(html.UnescapeString(page.Body.String()), tt.note) {
					t.Errorf("mapping page does not say %q", tt.note)
				}
				rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Excel"}, "id_column": {"id"},
					"show_1": {"1"}, "label_1": {"Answer"}, "rating_2": {"1"}})
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("import = %d, want 303: %s", rec.Code, rec.Body)
				}
				ds := env.lastDataset()
				if len(ds.ImportNotes) == 0 || !strings.HasPrefix(ds.ImportNotes[0], tt.note) {
					t.Errorf("import notes %q, want the first to start with %q", ds.ImportNotes, tt.note)
				}
				rows, err := env.db.ListDatasetRows(context.Background(), ds.ID, 0, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 2 {
					t.Fatalf("%d rows, want 2", len(rows))
				}
				if a := rows[0].Data["answer"]; a != "Tab\there, \"quoted\"\nand a second line" {
					t.Errorf("row q1 answer %q", a)
				}
				if a := rows[1].Data["answer"]; a != tt.second {
					t.Errorf("row q2 answer %q, want %q", a, tt.second)
				}
				if q := rows[0].Ratings["quality"]; q == nil || *q != 4.5 {
					t.Errorf("row q1 quality %v, want 4.5", q)
				}
			})
		})
	}
}

// TestUploadDuplicateColumnNames: a sheet with two "Comment" columns was
// refused at upload ("columns 3 and 4 have the same name"). It uploads,
// the mapping page and the import notes say the second is named
// "Comment (2)", and both import with their own cells.
func TestUploadDuplicateColumnNames(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("sheet.csv", "id,answer,Comment,Comment\r\ns1,Yes,first,second\r\ns2,No,third,fourth\r\n")
		const note = `Columns 3 and 4 of the header are both named “Comment”: column 4 is named “Comment (2)” here.`
		page := env.get(env.mapPath() + "?" + url.Values{"token": {token}}.Encode())
		if !strings.Contains(html.UnescapeString(page.Body.String()), note) {
			t.Errorf("mapping page does not say %q", note)
		}
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Sheet"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Answer"}, "show_2": {"1"}, "show_3": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d, want 303: %s", rec.Code, rec.Body)
		}
		ds := env.lastDataset()
		if len(ds.ImportNotes) == 0 || ds.ImportNotes[0] != note {
			t.Errorf("import notes %q, want %q first", ds.ImportNotes, note)
		}
		rows, err := env.db.ListDatasetRows(context.Background(), ds.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Data["Comment"] != "first" || rows[0].Data["Comment (2)"] != "second" || rows[1].Data["Comment (2)"] != "fourth" {
			t.Errorf("rows %+v", rows)
		}
	})
}

// TestAPIUploadSaysHowTheFileWasRead: the mapping page says how a file
// was read ("The file was read as UTF-16 text, tab-separated.", a column
// renamed because its name repeats), but the API's upload answer, the
// API's mapping step, did not: a script learned it only from the
// dataset's import_notes after importing. The answer now has read_notes,
// the page's sentences, and the dataset's import_notes start with them.
func TestAPIUploadSaysHowTheFileWasRead(t *testing.T) {
	utf16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(
		"id\tanswer\tquality\r\nq1\tYes\t4,5\r\nq2\tCafé ’ 日本語\t2\r\n")
	if err != nil {
		t.Fatal(err)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().String("id,answer,quality\r\nq1,Yes,4.5\r\nq2,Café ’ déjà,2\r\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filename, file string
		want                 []string
	}{
		{"utf-16 tsv", "Book1.txt", utf16, []string{"The file was read as UTF-16 text, tab-separated."}},
		{"windows-1252 csv", "old.csv", cp1252, []string{"The file was read as Windows-1252 text (not UTF-8)."}},
		{"repeated column", "sheet.csv", "id,answer,quality,quality\r\ns1,Yes,4,5\r\ns2,No,2,3\r\n",
			[]string{`Columns 3 and 4 of the header are both named “quality”: column 4 is named “quality (2)” here.`}},
		{"utf-8 csv", "plain.csv", "id,answer,quality\r\ns1,Yes,4\r\n", nil},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@read.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		for _, tt := range tests {
			up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, tt.filename, tt.file), http.StatusCreated)
			if len(up.ReadNotes) != len(tt.want) {
				t.Errorf("%s: read_notes %q, want %q", tt.name, up.ReadNotes, tt.want)
				continue
			}
			for i := range tt.want {
				if !strings.HasPrefix(up.ReadNotes[i], tt.want[i]) {
					t.Errorf("%s: read_notes[%d] %q, want it to start with %q", tt.name, i, up.ReadNotes[i], tt.want[i])
				}
			}
			ds := decode[APIDataset](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), tok,
				map[string]any{"upload_token": up.Token, "name": tt.name}), http.StatusCreated)
			if len(ds.ImportNotes) < len(up.ReadNotes) || !slices.Equal(ds.ImportNotes[:len(up.ReadNotes)], up.ReadNotes) {
				t.Errorf("%s: import_notes %q, want them to start with read_notes %q", tt.name, ds.ImportNotes, up.ReadNotes)
			}
		}
	})
}
