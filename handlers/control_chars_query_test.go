package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestControlCharactersRefusedInQueriesAndMultipart: NUL and the other
// control characters were refused in urlencoded forms and JSON bodies but
// not in query parameters (filters and tokens that reach SQL, a 500 on
// PostgreSQL), nor in multipart fields and file names (the dataset upload's
// name went on to the mapping step; a file name was stored with the upload
// or became an imported rubric's name). Each is now refused with 422 naming
// the parameter or field, before any SQL, on both databases.
func TestControlCharactersRefusedInQueriesAndMultipart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		datasets, err := env.db.ListDatasets(ctx, env.ws.ID, env.project.ID)
		if err != nil || len(datasets) == 0 {
			t.Fatalf("demo datasets: %v (%d)", err, len(datasets))
		}
		ds := datasets[0]
		pid := env.project.ID

		// Pages: the message names the parameter.
		for _, tc := range []struct{ name, target, want string }{
			{"runs filter", "/runs?status=a%00b", `the query parameter "status"`},
			{"runs method", "/runs?method=%01", `the query parameter "method"`},
			{"a parameter's name", "/runs?sta%00tus=x", `the query parameter name "sta\x00tus"`},
			{"pending upload token", fmt.Sprintf("/projects/%d/datasets/map?token=t%%00k", pid), `the query parameter "token"`},
			{"dataset name on the mapping step", fmt.Sprintf("/projects/%d/datasets/map?token=x&name=a%%00b", pid), `the query parameter "name"`},
			{"review queue order", fmt.Sprintf("/datasets/%d/review?order=%%1b", ds.ID), `the query parameter "order"`},
			{"a path parameter", "/s/ab%00cd", `the address part "token"`},
		} {
			rec := env.get(tc.target)
			body := html.UnescapeString(rec.Body.String())
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) || !strings.Contains(body, "control character") {
				t.Errorf("GET %s (%s): %d, want 422 saying %s holds a control character\n%.400s", tc.target, tc.name, rec.Code, tc.want, body)
			}
		}

		// Tabs and line breaks in a query are text, as in forms.
		if rec := env.get(fmt.Sprintf("/datasets/%d/review?order=a%%09b%%0A", ds.ID)); rec.Code != http.StatusOK {
			t.Errorf("a tab and a line break in a query: %d, want 200", rec.Code)
		}

		// Multipart: the dataset upload (streamed, checked as it is read)
		// and the rubric import (a small form).
		multipartPost := func(target string, fields map[string]string, fileField, filename, content string) *bytes.Buffer {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			for k, v := range fields {
				if err := mw.WriteField(k, v); err != nil {
					t.Fatal(err)
				}
			}
			fw, err := mw.CreatePart(filePartHeader(fileField, filename))
			if err != nil {
				t.Fatal(err)
			}
			fw.Write([]byte(content))
			mw.Close()
			rec := env.do(http.MethodPost, target, &body, mw.FormDataContentType())
			out := bytes.NewBufferString(fmt.Sprint(rec.Code, " "))
			out.WriteString(html.UnescapeString(rec.Body.String()))
			return out
		}
		csv := "id,response\ns1,hello\n"
		uploads := fmt.Sprintf("/projects/%d/datasets/upload", pid)
		rubricFile := "task: a reply\ncriteria:\n  - name: Good\n    lo: 1\n    hi: 5\n    description: good\n"
		for _, tc := range []struct {
			name, target         string
			fields               map[string]string
			fileField, filename  string
			content, want, avoid string
		}{
			{"dataset name", uploads, map[string]string{"name": "a\x00b"}, "file", "rows.csv", csv, `"name" holds a control character (U+0000, NUL)`, ""},
			{"dataset name with an escape", uploads, map[string]string{"name": "red\x1b[31m"}, "file", "rows.csv", csv, `"name" holds a control character (U+001B)`, "red\x1b"},
			{"upload file name", uploads, nil, "file", "ro\x00ws.csv", csv, `the file name of "file" holds a control character (U+0000, NUL)`, ""},
			{"rubric file name", fmt.Sprintf("/projects/%d/rubrics/import", pid), nil, "rubric_file", "ru\x01bric.yaml", rubricFile, `the file name of "rubric_file" holds a control character (U+0001)`, ""},
			{"rubric import field", fmt.Sprintf("/projects/%d/rubrics/import", pid), map[string]string{"note": "x\x00"}, "rubric_file", "rubric.yaml", rubricFile, `"note" holds a control character (U+0000, NUL)`, ""},
		} {
			got := multipartPost(tc.target, tc.fields, tc.fileField, tc.filename, tc.content).String()
			if !strings.HasPrefix(got, "422 ") || !strings.Contains(got, tc.want) {
				t.Errorf("multipart %s: %.500s\nwant 422 saying %s", tc.name, got, tc.want)
			}
			if tc.avoid != "" && strings.Contains(got, tc.avoid) {
				t.Errorf("multipart %s: the answer echoes the refused value", tc.name)
			}
		}
		// The API (a member exists now: no more local mode): the same, in
		// its error shape.
		a := newAPIClient(t, env)
		editor := env.createUser(env.ws.ID, "editor@q.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		for _, tc := range []struct{ target, want string }{
			{"/api/v1/runs?cursor=%00", `the query parameter "cursor" holds a control character (U+0000, NUL)`},
			{fmt.Sprintf("/api/v1/datasets/%d/reviews?criterion=Go%%00od", ds.ID), `the query parameter "criterion" holds a control character (U+0000, NUL)`},
			{"/api/v1/projects?limit=5&x=%7f", `the query parameter "x" holds a control character (U+007F)`},
		} {
			rec := a.get(tc.target, tok)
			var answer APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if rec.Code != http.StatusUnprocessableEntity || answer.Error.Code != "invalid" || !strings.Contains(answer.Error.Message, tc.want) {
				t.Errorf("GET %s: %d %.300s, want 422 saying %s", tc.target, rec.Code, rec.Body, tc.want)
			}
		}

		// The API's upload names the file name too.
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, err := mw.CreatePart(filePartHeader("file", "s\x00.csv"))
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(csv))
		mw.Close()
		rec := a.call(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/uploads", pid), tok, body.Bytes(), mw.FormDataContentType())
		var answer APIError
		_ = json.Unmarshal(rec.Body.Bytes(), &answer)
		if want := `the file name of "file" holds a control character (U+0000, NUL)`; rec.Code != http.StatusUnprocessableEntity || !strings.Contains(answer.Error.Message, want) {
			t.Errorf("API upload with NUL in the file name: %d %.300s, want 422 saying %s", rec.Code, rec.Body, want)
		}

		// Nothing was imported or kept from the refused requests.
		rubrics, err := env.db.ListRubrics(ctx, env.ws.ID, pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rubrics {
			if strings.ContainsFunc(r.Name, isRefusedControl) {
				t.Errorf("a rubric named %q was stored", r.Name)
			}
		}
	})
}

// filePartHeader is a file part's header with its file name spelled as
// RFC 2231 allows (filename*=UTF-8”...), percent-encoded: a control
// character written raw in a header line is refused by the MIME reader
// already, but this spelling decodes to any character.
func filePartHeader(field, filename string) textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename*=UTF-8''%s`, field, url.PathEscape(filename)))
	h.Set("Content-Type", "application/octet-stream")
	return h
}
