package handlers

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"gorm.io/gorm"
)

// perAnnotatorCSV repeats ids with different ratings: one row per annotator.
const perAnnotatorCSV = "id,text,rater,quality\n" +
	"s1,first answer here,ann1,1\n" +
	"s1,first answer here,ann2,3\n" +
	"s2,second answer here,ann1,2\n" +
	"s2,second answer here,ann2,4\n" +
	"s3,third answer here,ann1,5\n"

// TestMappingExplainsRepeatedIDs: an id column with repeats used to be
// dropped silently for generated ids; the mapping step now says which ids
// repeat and on how many rows, and, when their ratings differ, offers the
// one-row-per-annotator layout with a link that selects it.
func TestMappingExplainsRepeatedIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name    string
			csv     string
			want    []string
			notWant []string
		}{
			{
				name: "per annotator",
				csv:  perAnnotatorCSV,
				want: []string{`data-testid="id-note"`, "was not taken as the id", "2 values appear on more than one row (4 rows in all)",
					"<code>s1</code> (2 rows)", "<code>s2</code> (2 rows)", "different ratings in <code>quality</code>", "one row per annotator",
					`data-testid="use-annotator"`, "annotator_column=rater", "id_column=id", "#annotator-column", `id="annotator-column"`},
			},
			{
				// Ratings out of one maximum ("3/5") are numbers to the
				// import: the layout was not offered for them (import43).
				name: "per annotator, ratings written out of one maximum",
				csv: "id,text,rater,quality\n" +
					"s1,first answer here,ann1,1/5\ns1,first answer here,ann2,3/5\n" +
					"s2,second answer here,ann1,2/5\ns2,second answer here,ann2,4/5\ns3,third answer here,ann1,5/5\n",
				want: []string{`data-testid="id-note"`, "different ratings in <code>quality</code>", "one row per annotator",
					`data-testid="use-annotator"`, "annotator_column=rater", "id_column=id"},
			},
			{
				name:    "plain duplicates",
				csv:     "id,text,quality\n7,an answer here,3\n7,an answer here,3\n8,other answer,1\n",
				want:    []string{`data-testid="id-note"`, "1 value appears on more than one row (2 rows in all)", "<code>7</code> (2 rows)", "remove the copies"},
				notWant: []string{"one row per annotator", `data-testid="use-annotator"`},
			},
			{
				// Rows of one id with different ratings but different
				// texts too are different samples sharing an id: the
				// per-annotator import would refuse them ("rows disagree
				// on this field"), so it is not suggested.
				name: "duplicate ids with different texts",
				csv: "id,text,rater,quality\n" +
					"s1,first answer here,ann1,1\ns1,quite another answer,ann2,3\n" +
					"s2,second answer here,ann1,2\ns3,third answer here,ann2,5\n",
				want: []string{`data-testid="id-note"`, "1 value appears on more than one row (2 rows in all)",
					"Rows sharing an id also differ in <code>text</code>", "different samples under one id", "give each sample its own id"},
				notWant: []string{"one row per annotator", `data-testid="use-annotator"`, "annotator_column="},
			},
			{
				// The sentence ends on its last word, with no space
				// before the full stop (it read "no id .").
				name: "empty ids",
				csv:  "id,text,quality\n,an answer here,3\n8,other answer,1\n9,third answer,2\n",
				want: []string{`data-testid="id-note"`, "1 row has no id. Ids must be present and unique."},
			},
			{
				name:    "unique ids: nothing to say",
				csv:     goodCSV,
				notWant: []string{`data-testid="id-note"`},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				token := env.uploadToken("data.csv", tt.csv)
				body := html.UnescapeString(env.get(env.mapPath() + "?token=" + token).Body.String())
				if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
					t.Errorf("mapping page lacks %q:\n%s", missing, body)
				}
				for _, nw := range tt.notWant {
					if strings.Contains(body, nw) {
						t.Errorf("mapping page contains %q", nw)
					}
				}
			})
		}

		// Following the link selects the layout, and importing with it
		// gives one sample per id.
		token := env.uploadToken("data.csv", perAnnotatorCSV)
		body := env.get(env.mapPath() + "?token=" + token).Body.String()
		i := strings.Index(body, `data-testid="use-annotator"`)
		j := strings.LastIndex(body[:i], `href="`)
		link := html.UnescapeString(body[j+len(`href="`) : j+strings.Index(body[j+6:], `"`)+6])
		// A browser keeps the fragment to itself.
		link, _, _ = strings.Cut(link, "#")
		page := env.get(link).Body.String()
		if missing := bodyLacks(page, `<option value="id" selected>`, `<option value="rater" selected>`); len(missing) > 0 {
			t.Fatalf("after the link, the mapping page lacks %q", missing)
		}
		if strings.Contains(page, `data-testid="id-note"`) {
			t.Errorf("the note stays once the per-annotator layout is chosen")
		}
		form := url.Values{"token": {token}, "name": {"Per annotator"}, "id_column": {"id"}, "annotator_column": {"rater"},
			"show_1": {"1"}, "label_1": {"Answer"}, "rating_3": {"1"}}
		if rec := env.postForm(env.mapPath(), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
		}
		dss, err := env.db.ListDatasets(context.Background(), env.ws.ID, env.project.ID)
		if err != nil || dss[0].RowCount != 3 || dss[0].IDColumn != "id" {
			t.Fatalf("imported %+v (%v), want 3 samples keyed by id", dss[0], err)
		}
	})
}

// TestFirstRowLooksLikeData: a CSV without a header used to lose its first
// row silently (read as column names). The mapping step warns, offers to
// read it as data, and the import then keeps every row.
func TestFirstRowLooksLikeData(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const src = "1,the cat sat on the mat,4\n2,a dog ran in the park,5\n3,birds sing at dawn,2\n"
		token := env.uploadToken("noheader.csv", src)
		page := html.UnescapeString(env.get(env.mapPath() + "?token=" + token).Body.String())
		if missing := bodyLacks(page, `data-testid="header-warning"`, `“1”, “4” are numbers`, "not imported", `data-testid="first-row-is-data"`, "2 rows"); len(missing) > 0 {
			t.Fatalf("mapping page lacks %q:\n%s", missing, page)
		}
		page = env.get(env.mapPath() + "?token=" + token + "&header=none").Body.String()
		if missing := bodyLacks(page, `data-testid="no-header-note"`, "column_1", "column_3", "the cat sat on the mat", "3 rows",
			`<input type="hidden" name="header" value="none">`); len(missing) > 0 {
			t.Fatalf("mapping page read without header lacks %q:\n%s", missing, page)
		}
		if strings.Contains(page, `data-testid="header-warning"`) {
			t.Errorf("the warning stays after choosing to read the first row as data")
		}
		form := url.Values{"token": {token}, "name": {"No header"}, "header": {"none"}, "id_column": {"column_1"},
			"show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}}
		rec := env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
		}
		ctx := context.Background()
		dss, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil || dss[0].RowCount != 3 {
			t.Fatalf("imported %+v (%v), want all 3 rows", dss[0], err)
		}
		rows, err := env.db.ListDatasetRows(ctx, dss[0].ID, 0, 1)
		if err != nil || rows[0].ExternalID != "1" || rows[0].Data["column_2"] != "the cat sat on the mat" || rows[0].Ratings["column_3"] == nil || *rows[0].Ratings["column_3"] != 4 {
			t.Fatalf("first row %+v (%v), want the file's first line", rows, err)
		}

		// The upload form's checkbox reads the first row as data from
		// the start, so a first row with repeated values is not refused.
		rec = env.uploadWith("dup.csv", "3,3,x y\n4,5,z w\n", url.Values{"no_header": {"1"}})
		if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "header=none") {
			t.Fatalf("upload with no_header = %d %s: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		rec = env.upload("dup.csv", "3,3,x y\n4,5,z w\n", "")
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(rec.Body.String()), "The first row is data") {
			t.Errorf("upload of a repeated first row with a header = %d, want 422 naming the option: %s", rec.Code, rec.Body)
		}
	})
}

// uploadWith posts a file with extra form fields.
func (env *testEnv) uploadWith(filename, content string, fields url.Values) *httptest.ResponseRecorder {
	env.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, vs := range fields {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				env.t.Fatal(err)
			}
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		env.t.Fatal(err)
	}
	fw.Write([]byte(content))
	mw.Close()
	return env.do(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", env.project.ID), &body, mw.FormDataContentType())
}

// TestDatasetPageReadsOnlyItsRows: the dataset page used to read every row
// (texts and all) to show 25. It now loads the 25 rows it shows; the rating
// summaries read the ratings column alone.
func TestDatasetPageReadsOnlyItsRows(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ds := env.demoDataset() // 30 rows
		var loaded int64
		cb := env.db.Gorm.Callback().Query().After("gorm:query")
		if err := cb.Register("test:count_dataset_rows", func(tx *gorm.DB) {
			if tx.Statement.Table == "dataset_rows" {
				loaded += tx.Statement.RowsAffected
			}
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.db.Gorm.Callback().Query().Remove("test:count_dataset_rows") })
		tests := []struct {
			query string
			rows  int64
			want  string
		}{
			{"", 25, "demo-25"},
			{"?page=2", 5, "demo-30"},
		}
		for _, tt := range tests {
			loaded = 0
			rec := env.get(fmt.Sprintf("/datasets/%d%s", ds.ID, tt.query))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("GET dataset%s = %d, want a page showing %s", tt.query, rec.Code, tt.want)
			}
			if loaded != tt.rows {
				t.Errorf("dataset%s loaded %d whole rows, want %d", tt.query, loaded, tt.rows)
			}
		}
	})
}

// TestStreamedImportAllOrNothing: the import streams rows into the
// database in chunks; a bad cell past the first chunks still leaves
// nothing stored, and the problem names its line and column. A good file
// of the same length imports every row, and the upload was kept in parts
// (not as one blob) for the mapping step.
func TestStreamedImportAllOrNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 3500 // several insert chunks
		file := func(badLine int) string {
			var b strings.Builder
			b.WriteString("id,text,score\n")
			for i := 2; i <= n+1; i++ { // i is the line number
				score := fmt.Sprint(i % 5)
				if i == badLine {
					score = "bad"
				}
				fmt.Fprintf(&b, "s%d,text of line %d,%s\n", i, i, score)
			}
			return b.String()
		}
		ctx := context.Background()
		form := func(token string) url.Values {
			return url.Values{"token": {token}, "name": {"Streamed"}, "id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}}
		}
		tests := []struct {
			name    string
			badLine int
		}{
			{"bad rating after three chunks", 3300},
			{"clean file", 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				token := env.uploadToken("big.csv", file(tt.badLine))
				u, err := env.db.FindPendingUpload(ctx, env.ws.ID, token)
				if err != nil || len(u.Content) != 0 || u.SizeBytes == 0 {
					t.Fatalf("pending upload holds %d bytes inline, size %d (%v); want it in parts", len(u.Content), u.SizeBytes, err)
				}
				var rowsBefore int64
				env.db.Gorm.Table("dataset_rows").Count(&rowsBefore)
				before := env.countDatasets()
				rec := env.postForm(env.mapPath(), form(token))
				var rowsAfter int64
				env.db.Gorm.Table("dataset_rows").Count(&rowsAfter)
				if tt.badLine > 0 {
					body := html.UnescapeString(rec.Body.String())
					if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, fmt.Sprintf("<td>line %d</td><td>score</td>", tt.badLine)) ||
						!strings.Contains(body, `the rating “bad” is not a number`) {
						t.Fatalf("POST map = %d, want 422 naming line %d, column score:\n%.2000s", rec.Code, tt.badLine, body)
					}
					if env.countDatasets() != before || rowsAfter != rowsBefore {
						t.Errorf("a refused import stored %d datasets and %d rows", env.countDatasets()-before, rowsAfter-rowsBefore)
					}
					return
				}
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("POST map = %d: %.2000s", rec.Code, rec.Body)
				}
				if rowsAfter-rowsBefore != n {
					t.Errorf("stored %d rows, want %d", rowsAfter-rowsBefore, n)
				}
			})
		}
	})
}
