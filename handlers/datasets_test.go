package handlers

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// upload posts a file to the demo project's upload form.
func (env *testEnv) upload(filename, content, name string) *httptest.ResponseRecorder {
	env.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		env.t.Fatal(err)
	}
	fw.Write([]byte(content))
	if err := mw.WriteField("name", name); err != nil {
		env.t.Fatal(err)
	}
	mw.Close()
	return env.do(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", env.project.ID), &body, mw.FormDataContentType())
}

// uploadToken uploads a file that must be accepted and returns its token.
func (env *testEnv) uploadToken(filename, content string) string {
	env.t.Helper()
	rec := env.upload(filename, content, "")
	if rec.Code != http.StatusSeeOther {
		env.t.Fatalf("upload %s = %d, want 303: %s", filename, rec.Code, rec.Body)
	}
	loc, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		env.t.Fatal(err)
	}
	if want := fmt.Sprintf("/projects/%d/datasets/map", env.project.ID); loc.Path != want {
		env.t.Fatalf("upload redirected to %s, want %s", loc.Path, want)
	}
	return loc.Query().Get("token")
}

// mapPath is the demo project's mapping step.
func (env *testEnv) mapPath() string { return fmt.Sprintf("/projects/%d/datasets/map", env.project.ID) }

// goodCSV has an id, two text columns and a rating with one blank cell.
const goodCSV = "id,question,answer,quality\n" +
	"q1,What is the capital of France?,Paris is the capital.,4\n" +
	"q2,How many legs has a spider?,Eight legs.,\n" +
	"q3,Who wrote Hamlet?,William Shakespeare wrote it.,2\n"

func TestUploadMapAndShowDataset(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("qa.csv", goodCSV)

		rec := env.get(env.mapPath() + "?token=" + token)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET map = %d: %s", rec.Code, rec.Body)
		}
		// The suggestion: id as id, the two text columns shown, quality rated.
		want := []string{"What is the capital of France?", `name="show_1" value="1" checked`, `name="show_2" value="1" checked`,
			`name="rating_3" value="1" checked`, `<option value="id" selected>`, `value="qa"`}
		if missing := bodyLacks(rec.Body.String(), want...); len(missing) > 0 {
			t.Errorf("mapping page lacks %q", missing)
		}

		before := env.countDatasets()
		form := url.Values{"token": {token}, "name": {"Quiz answers"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Question"}, "show_2": {"1"}, "label_2": {"Answer"}, "rating_3": {"1"}}
		rec = env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d, want 303: %s", rec.Code, rec.Body)
		}
		if got := env.countDatasets(); got != before+1 {
			t.Errorf("datasets after import = %d, want %d", got, before+1)
		}
		if _, err := env.db.FindPendingUpload(context.Background(), env.ws.ID, token); err == nil {
			t.Errorf("the pending upload is still stored after the import")
		}

		page := env.get(rec.Header().Get("Location"))
		body := page.Body.String()
		if page.Code != http.StatusOK {
			t.Fatalf("GET dataset = %d", page.Code)
		}
		want = []string{"Quiz answers", "3 rows", "q1", "q2", "q3", "Who wrote Hamlet?", "Question", "Answer",
			// quality: 2 rated, 1 missing, mean 3.00, sd 1.41, min 2.00, max 4.00
			`<td class="num">2</td><td class="num">1</td><td class="num">3.00</td><td class="num">1.41</td><td class="num">2.00</td><td class="num">4.00</td>`,
			`<td class="num">—</td>`}
		if missing := bodyLacks(body, want...); len(missing) > 0 {
			t.Errorf("dataset page lacks %q:\n%s", missing, body)
		}
	})
}

func TestUploadRefusesBrokenFiles(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name     string
			filename string
			content  string
			want     string
		}{
			{"invalid JSON line", "rows.jsonl", "{\"id\": 1, \"text\": \"fine\"}\n{\"id\": 2, \"text\": oops}\n", "line 2: invalid JSON"},
			// Each says what to do (QA: "the file is empty" alone did not).
			{"empty file", "rows.csv", "", "the file is empty: choose the file that holds your data"},
			{"header only", "rows.csv", "id,text\n", "only a header: add one row per sample under it; if that line is itself a sample, tick &#34;The first row is data&#34; on the upload form and upload it again"},
			{"empty json array", "rows.json", "[]", "the file has no rows: it needs one row (in JSON, one object) per sample"},
			{"ragged CSV row", "rows.csv", "id,text\na,hello\nb,hello,again\n", "line 3: this row has 3 fields"},
			{"workbook", "rows.xlsx", "PK\x03\x04rest", "workbooks"},
			// The file type is named, with what to do.
			{"html page", "page.html", "<html><body>hi</body></html>", "this looks like an HTML page (a saved web page), not a CSV, JSONL or JSON file: export your table as CSV, JSONL or JSON"},
			{"csv under a json name", "rows.json", "id,text\na,hello\n", "the file is named .json but its first line looks like comma-separated values (CSV), not JSON: if it is a table with a header row, rename it to end in .csv"},
			{"txt file", "wrongext.txt", "id,text\na,hello\n", "files ending in .txt are not accepted: upload a .csv, .tsv, .jsonl or .json file; this one looks like comma-separated values"},
			{"broken json array", "rows.json", "[\n{\"id\": 1},\n{\"id\": }\n]", "line 3: invalid JSON in item 2"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before := env.countDatasets()
				rec := env.upload(tt.filename, tt.content, "keep me")
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("upload = %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				if !strings.Contains(body, tt.want) {
					t.Errorf("upload page lacks %q:\n%s", tt.want, body)
				}
				if !strings.Contains(body, `value="keep me"`) {
					t.Errorf("the typed name is not kept on the form")
				}
				if got := env.countDatasets(); got != before {
					t.Errorf("datasets = %d after a refused upload, want %d", got, before)
				}
			})
		}
	})
}

func TestUploadLimits(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.h.MaxUploadBytes = 64
		rec := env.upload("big.csv", "id,text\n"+strings.Repeat("a,some words here\n", 10), "")
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("upload over the limit = %d, want 422", rec.Code)
		}
		if want := "larger than the 64 bytes limit"; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("upload page lacks %q", want)
		}
		rec = env.get(env.mapPath() + "?token=not-a-token")
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "upload the file again") {
			t.Errorf("unknown token = %d, want 404 asking to upload again", rec.Code)
		}
	})
}

func TestMappingProblemsImportNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name    string
			content string
			form    url.Values
			want    []string
		}{
			{
				name:    "duplicate id",
				content: "id,text,score\na,first text,1\nb,second text,2\na,third text,3\n",
				form:    url.Values{"id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}},
				want:    []string{"<td>line 4</td>", "also used on line 2", "Nothing was imported"},
			},
			{
				name:    "rating not a number",
				content: "id,text,score\na,first text,1\nb,second text,three\n",
				form:    url.Values{"id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}},
				want:    []string{"<td>line 3</td>", "<td>score</td>", "is not a number"},
			},
			{
				name:    "two fields with one label",
				content: "id,response,score\na,first text,1\n",
				form:    url.Values{"id_column": {"id"}, "show_0": {"1"}, "label_0": {"Response"}, "show_1": {"1"}, "label_1": {"Response"}, "rating_2": {"1"}},
				// A problem of the choices, said beside the label refused.
				want: []string{`id="map-label-1-error"`, `Column “response”: columns “id” and “response” have the same label “Response”`, "Nothing was imported"},
			},
			{
				name:    "nothing shown to the judge",
				content: "id,text,score\na,first text,1\n",
				form:    url.Values{"id_column": {"id"}, "rating_2": {"1"}},
				want:    []string{"choose at least one field"},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				token := env.uploadToken("data.csv", tt.content)
				before := env.countDatasets()
				tt.form.Set("token", token)
				tt.form.Set("name", "Broken")
				rec := env.postForm(env.mapPath(), tt.form)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("POST map = %d, want 422", rec.Code)
				}
				if missing := bodyLacks(rec.Body.String(), tt.want...); len(missing) > 0 {
					t.Errorf("mapping page lacks %q:\n%s", missing, rec.Body)
				}
				if got := env.countDatasets(); got != before {
					t.Errorf("datasets = %d after a refused mapping, want %d", got, before)
				}
				// The upload is kept so the mapping can be corrected.
				if _, err := env.db.FindPendingUpload(context.Background(), env.ws.ID, token); err != nil {
					t.Errorf("pending upload gone after a refused mapping: %v", err)
				}
			})
		}
	})
}

func TestDatasetPageEscapesCells(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("x.jsonl", `{"id": "x1", "text": "<script>alert(1)</script> hello there"}`+"\n")
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"<i>tricky</i>"}, "id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
		}
		body := env.get(rec.Header().Get("Location")).Body.String()
		tests := []struct {
			text string
			want bool
		}{
			{"&lt;script&gt;alert(1)&lt;/script&gt; hello there", true},
			{"<script>alert(1)</script>", false},
			{"&lt;i&gt;tricky&lt;/i&gt;", true},
			{"<i>tricky</i>", false},
		}
		for _, tt := range tests {
			if got := strings.Contains(body, tt.text); got != tt.want {
				t.Errorf("page contains %q = %v, want %v", tt.text, got, tt.want)
			}
		}
	})
}

func TestDatasetPaging(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ds := env.demoDataset() // 30 rows: two pages of 25
		tests := []struct {
			query   string
			want    []string
			notWant []string
		}{
			{"", []string{"Page 1 of 2", "demo-01", "demo-25", `rel="next"`}, []string{"demo-26", `rel="prev"`}},
			{"?page=2", []string{"Page 2 of 2", "demo-26", "demo-30", `rel="prev"`}, []string{"demo-25<", `rel="next"`}},
			{"?page=99", []string{"Page 2 of 2", "demo-30"}, nil},
			{"?page=-3", []string{"Page 1 of 2", "demo-01"}, nil},
		}
		for _, tt := range tests {
			rec := env.get(fmt.Sprintf("/datasets/%d%s", ds.ID, tt.query))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET dataset%s = %d", tt.query, rec.Code)
			}
			body := rec.Body.String()
			if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
				t.Errorf("dataset%s lacks %q", tt.query, missing)
			}
			for _, nw := range tt.notWant {
				if strings.Contains(body, nw) {
					t.Errorf("dataset%s contains %q", tt.query, nw)
				}
			}
		}
	})
}

// TestOneRowDatasetCountsInTheSingular: a file of one row reads "1 row",
// not "1 rows", on its mapping page (with "The only row" as its preview)
// and on the dataset's page.
func TestOneRowDatasetCountsInTheSingular(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("one.csv", "id,answer\nq1,Paris is the capital.\n")
		body := env.get(env.mapPath() + "?token=" + token).Body.String()
		if missing := bodyLacks(body, "one.csv · csv · 1 row · 2 columns", "The only row, to recognise the columns"); len(missing) > 0 {
			t.Errorf("mapping page lacks %q", missing)
		}
		if strings.Contains(body, "1 rows") {
			t.Errorf("mapping page says \"1 rows\"")
		}
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"One"}, "id_column": {"id"}, "show_1": {"1"}, "label_1": {"Answer"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d, want 303: %s", rec.Code, rec.Body)
		}
		page := env.get(rec.Header().Get("Location")).Body.String()
		if !strings.Contains(page, `data-testid="row-count">1 row<`) {
			t.Errorf("dataset page does not say \"1 row\"")
		}
	})
}
