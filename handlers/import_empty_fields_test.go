package handlers

import (
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// emptyAnswersCSV has an answer (shown to the judge) empty on rows 2 and
// 4, the second of them blank but for spaces, and a quality rating.
const emptyAnswersCSV = "id,question,answer,quality\n" +
	"q1,What is the capital of France?,Paris is the capital.,4\n" +
	"q2,How many legs has a spider?,,3\n" +
	"q3,Who wrote Hamlet?,William Shakespeare wrote it.,2\n" +
	"q4,What is 2+2?,   ,1\n"

// TestImportSaysWhichRowsAreEmpty: a dataset whose text cell, in a field
// the judge sees, was empty on some rows was imported without a word, and
// the judge then read nothing there. The import is not refused, but its
// notes say how many rows and which, with their lines in the file, so
// that the person can fill them in. They are stored with the dataset
// (regression: they were said once, in the message after the upload, and
// the dataset page never said them again): its page shows them on every
// visit, escaped, and the API's dataset carries them as import_notes.
func TestImportSaysWhichRowsAreEmpty(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		want := `2 rows have an empty “Answer” (column “answer”), which the judge sees: rows 2 and 4 (lines 3 and 5 of the file).`
		t.Run("browser", func(t *testing.T) {
			token := env.uploadToken("qa.csv", emptyAnswersCSV)
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Quiz answers"}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}})
			ds := env.lastDataset()
			if len(ds.ImportNotes) != 1 || !strings.Contains(ds.ImportNotes[0], want) {
				t.Errorf("stored import notes %q, want one saying %q", ds.ImportNotes, want)
			}
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import = %d, want 303 (imported): %s", rec.Code, rec.Body)
			}
			var flash string
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == flashCookie {
					_, enc, _ := strings.Cut(ck.Value, ":")
					b, _ := base64.RawURLEncoding.DecodeString(enc)
					flash = string(b)
				}
			}
			for _, w := range []string{`Imported 4 rows into “Quiz answers”.`, `One field the judge sees is empty in some rows: see "Import notes" below.`, "Next: write a rubric"} {
				if !strings.Contains(flash, w) {
					t.Errorf("the import message lacks %q:\n%s", w, flash)
				}
			}
			if strings.Contains(flash, `“Question”`) {
				t.Errorf("the import message names the question, which no row lacks:\n%s", flash)
			}
			// Shown on the dataset page the import leads to.
			flashCk := &http.Cookie{Name: flashCookie}
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == flashCookie {
					flashCk = ck
				}
			}
			page := env.send(http.MethodGet, rec.Header().Get("Location"), nil, "", flashCk)
			if body := html.UnescapeString(page.Body.String()); !strings.Contains(body, want) {
				t.Errorf("the dataset page does not show %q", want)
			}
			// And on every later visit, with no message from the upload.
			for range 2 {
				notes := html.UnescapeString(importNotesOf(t, env.get(rec.Header().Get("Location")).Body.String()))
				for _, w := range []string{want, "fill them in the file and upload it again"} {
					if !strings.Contains(notes, w) {
						t.Errorf("a later visit's import notes lack %q:\n%s", w, notes)
					}
				}
			}
		})
		t.Run("escaped on the page", func(t *testing.T) {
			token := env.uploadToken("qa.csv", strings.Replace(emptyAnswersCSV, "id,question,answer,quality", `id,question,<img src=x onerror=alert(1)>,quality`, 1))
			rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Quiz answers escaped"}, "id_column": {"id"},
				"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"<b>Answer</b>"}, "rating_3": {"1"}})
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("import = %d, want 303 (imported): %s", rec.Code, rec.Body)
			}
			notes := importNotesOf(t, env.get(rec.Header().Get("Location")).Body.String())
			if strings.Contains(notes, "<b>") || strings.Contains(notes, "<img") {
				t.Errorf("the import notes show the file's text as markup:\n%s", notes)
			}
			if !strings.Contains(notes, "&lt;b&gt;Answer&lt;/b&gt;") || !strings.Contains(notes, "&lt;img src=x onerror=alert(1)&gt;") {
				t.Errorf("the import notes do not show the label and column as text:\n%s", notes)
			}
		})
		t.Run("API", func(t *testing.T) {
			a := newAPIClient(t, env)
			owner := env.createUser(env.ws.ID, "owner@empty.test", models.RoleOwner)
			_, tok := env.apiToken(env.ws.ID, owner.ID)
			up := decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "qa.csv", emptyAnswersCSV), http.StatusCreated)
			mapping := map[string]any{"id_column": "id", "fields": []map[string]string{{"column": "question", "label": "Question"}, {"column": "answer", "label": "Answer"}},
				"rating_columns": []string{"quality"}}
			ds := decode[APIDataset](t, a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), tok,
				map[string]any{"upload_token": up.Token, "name": "Quiz answers 2", "mapping": mapping}), http.StatusCreated)
			if ds.RowCount != 4 {
				t.Errorf("%d rows imported, want 4", ds.RowCount)
			}
			if len(ds.ImportNotes) != 1 || !strings.Contains(ds.ImportNotes[0], want) {
				t.Errorf("import_notes = %q, want one saying %q", ds.ImportNotes, want)
			}
			// Stored: the dataset's answer says them later too.
			again := decode[APIDataset](t, a.json(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d", ds.ID), tok, nil), http.StatusOK)
			if !slices.Equal(again.ImportNotes, ds.ImportNotes) {
				t.Errorf("GET's import_notes = %q, want those of the creation %q", again.ImportNotes, ds.ImportNotes)
			}
			// A file whose only empty cell is a human rating (q2's) has one
			// note, naming that row (they were not named at all before:
			// the dataset page said "Missing 1").
			up = decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "good.csv", goodCSV), http.StatusCreated)
			rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), tok,
				map[string]any{"upload_token": up.Token, "name": "Good", "mapping": mapping})
			wantRating := `1 row has no human rating in column “quality”: row 2 (line 3 of the file). That sample is missing from every comparison with the human ratings of that column`
			if ds := decode[APIDataset](t, rec, http.StatusCreated); len(ds.ImportNotes) != 1 || !strings.Contains(ds.ImportNotes[0], wantRating) {
				t.Errorf("a file with one empty rating: import notes %q, want one saying %q", ds.ImportNotes, wantRating)
			}
			// A file without empty cells has no notes.
			complete := strings.Replace(goodCSV, "Eight legs.,\n", "Eight legs.,3\n", 1)
			up = decode[APIUpload](t, a.upload(fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), tok, "complete.csv", complete), http.StatusCreated)
			rec = a.json(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), tok,
				map[string]any{"upload_token": up.Token, "name": "Complete", "mapping": mapping})
			if ds := decode[APIDataset](t, rec, http.StatusCreated); len(ds.ImportNotes) != 0 || strings.Contains(rec.Body.String(), "import_notes") {
				t.Errorf("a file without empty cells has import notes: %s", rec.Body)
			}
		})
	})
}

// lastDataset is the workspace's newest dataset, as stored.
func (env *testEnv) lastDataset() models.Dataset {
	env.t.Helper()
	var ds models.Dataset
	if err := env.db.Gorm.Where("workspace_id = ?", env.ws.ID).Order("id DESC").First(&ds).Error; err != nil {
		env.t.Fatal(err)
	}
	return ds
}

var importNotesRe = regexp.MustCompile(`(?s)<div class="card" data-testid="import-notes">.*?</div>`)

// importNotesOf is the import notes card of a dataset page.
func importNotesOf(t *testing.T, page string) string {
	t.Helper()
	notes := importNotesRe.FindString(page)
	if notes == "" {
		t.Fatalf("the dataset page has no import notes")
	}
	return notes
}
