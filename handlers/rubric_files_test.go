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
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/rubrictemplates"
	"github.com/batcheval/batcheval/models/demo"
)

// importRubricFile posts a file to the project's rubric import.
func (env *testEnv) importRubricFile(name string, content []byte) *httptestRecorder {
	env.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("rubric_file", name)
	if err != nil {
		env.t.Fatal(err)
	}
	fw.Write(content)
	mw.Close()
	return env.do(http.MethodPost, fmt.Sprintf("/projects/%d/rubrics/import", env.project.ID), &body, mw.FormDataContentType())
}

// Every template opens in the editor, and saving it stores its criteria.
func TestRubricFromTemplate(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		newPage := env.get(fmt.Sprintf("/projects/%d/rubrics/new", env.project.ID)).Body.String()
		for _, tpl := range rubrictemplates.All() {
			t.Run(tpl.Key, func(t *testing.T) {
				link := fmt.Sprintf(`href="/projects/%d/rubrics/new?template=%s#rubric-form"`, env.project.ID, tpl.Key)
				if !strings.Contains(newPage, link) {
					t.Errorf("the new-rubric page does not offer %s", link)
				}
				_, want, err := rubrictemplates.Rubric(tpl.Key)
				if err != nil {
					t.Fatal(err)
				}
				rec := env.get(fmt.Sprintf("/projects/%d/rubrics/new?template=%s", env.project.ID, tpl.Key))
				body := rec.Body.String()
				if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="rubric-notice"`) {
					t.Fatalf("status %d; no notice of the template", rec.Code)
				}
				// Post the editor as shown: its fields carry the template.
				f := url.Values{"action": {"save"}, "name": {tpl.Name + " (mine)"}, "task": {want.Task}}
				for i, c := range want.Criteria {
					for part, v := range map[string]string{"name": c.Name, "description": c.Description, "lo": fmt.Sprint(c.Lo), "hi": fmt.Sprint(c.Hi),
						"low": c.Levels.Low, "middle": c.Levels.Middle, "high": c.Levels.High} {
						if !strings.Contains(body, `value="`+escapeAttr(v)+`"`) && !strings.Contains(body, ">"+escapeAttr(v)+"</textarea>") {
							t.Errorf("criterion %d's %s %q is not in the editor", i+1, part, v)
						}
						f.Set(criterionInputID(i, part), v)
					}
				}
				if rec := env.postForm(fmt.Sprintf("/projects/%d/rubrics", env.project.ID), f); rec.Code != http.StatusSeeOther {
					t.Fatalf("save: status %d", rec.Code)
				}
				rs, err := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got := rs[0].Evaluator(); rs[0].Name != tpl.Name+" (mine)" || !reflect.DeepEqual(got.Criteria, want.Criteria) {
					t.Errorf("saved %q with %+v, want the template's criteria %+v", rs[0].Name, got.Criteria, want.Criteria)
				}
			})
		}
		if rec := env.get(fmt.Sprintf("/projects/%d/rubrics/new?template=nope", env.project.ID)); rec.Code != http.StatusNotFound {
			t.Errorf("unknown template: status %d, want 404", rec.Code)
		}
	})
}

// escapeAttr is templ's escaping of the characters templates use.
func escapeAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&#34;", "'", "&#39;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// A rubric exported from the dashboard imports back as the same rubric,
// and the command line's demo rubric file imports as it is.
func TestRubricExportImport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rec := env.get(fmt.Sprintf("/rubrics/%d/export", d.rubric.ID))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Disposition"), `filename="engaging-and-coherent.yaml"`) {
			t.Fatalf("export: status %d, disposition %q", rec.Code, rec.Header().Get("Content-Disposition"))
		}
		exported := rec.Body.Bytes()
		cases := []struct {
			name, file string
			content    []byte
			want       evaluator.Rubric
		}{
			{"exported", "again.yaml", exported, d.rubric.Evaluator()},
			{"command line's file", "demo.yaml", demo.RubricYAML(), mustDemoRubric(t)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.importRubricFile(tc.file, tc.content)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("import: status %d: %s", rec.Code, rec.Body.String())
				}
				rs, err := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
				if err != nil {
					t.Fatal(err)
				}
				got := rs[0]
				if want := strings.TrimSuffix(tc.file, ".yaml"); got.Name != want {
					t.Errorf("imported name %q, want %q", got.Name, want)
				}
				if rec.Header().Get("Location") != fmt.Sprintf("/rubrics/%d/edit", got.ID) {
					t.Errorf("import redirects to %q", rec.Header().Get("Location"))
				}
				// Compared as files: an empty list and none are the same rubric.
				gotFile, _ := evaluator.MarshalRubricFile(got.Evaluator())
				wantFile, _ := evaluator.MarshalRubricFile(tc.want)
				if string(gotFile) != string(wantFile) {
					t.Errorf("imported:\n%s\nwant:\n%s", gotFile, wantFile)
				}
			})
		}
	})
}

func mustDemoRubric(t *testing.T) evaluator.Rubric {
	r, err := demo.Rubric()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A file that cannot be imported says what is wrong, naming the field,
// and stores nothing.
func TestRubricImportErrors(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		cases := []struct{ name, file, want string }{
			{"misspelt key", "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: 3\n    descripton: x\n", "descripton"},
			{"range not a number", "task: t\ncriteria:\n  - name: A\n    lo: one\n    hi: 3\n", "lo"},
			{"no task", "criteria:\n  - name: A\n    lo: 1\n    hi: 3\n", "task description is empty"},
			// With both lines (forms45: it named the criterion only).
			{"duplicate criterion", "task: t\ncriteria:\n  - {name: A, lo: 1, hi: 3}\n  - {name: a, lo: 1, hi: 3}\n",
				`line 4: criterion &#34;a&#34; appears twice: criterion names must be unique (the first is on line 3)`},
			// In the product's words, with the line (not "[5:9] sequence end token ']' not found").
			{"list not closed", "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: [3\n", `line 5: a list opened with &#34;[&#34; is not closed`},
			{"level key on the criterion", "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: 3\n    low: bad\n",
				`line 6, criterion 1 (&#34;A&#34;): &#34;low&#34; is not a criterion field; the fields of a criterion are name, description`},
		}
		before, _ := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.importRubricFile("bad.yaml", []byte(tc.file))
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				i := strings.Index(body, `data-testid="import-error"`)
				if i < 0 {
					t.Fatalf("no import error shown")
				}
				if msg := body[i : i+strings.Index(body[i:], "</div>")]; !strings.Contains(msg, "bad.yaml") || !strings.Contains(msg, tc.want) {
					t.Errorf("import error %q does not name %q", msg, tc.want)
				}
				// The file input is marked invalid and points to its help
				// and to the message (forms54: it was not marked invalid).
				if tag := openingTag(body, "rubric_file"); !strings.Contains(tag, `aria-invalid="true"`) || !slices.Equal(describedBy(tag), []string{"rubric_file-help", "rubric_file-error"}) {
					t.Errorf("the file input is not marked invalid and tied to its help and message: %s", tag)
				}
			})
		}
		after, _ := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
		if len(after) != len(before) {
			t.Errorf("%d rubrics stored from bad files", len(after)-len(before))
		}
	})
}

// The editor's reloads land where the change is, and a save shows every
// problem next to its field at once.
func TestRubricEditorAnchorsAndErrors(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		action := fmt.Sprintf("/projects/%d/rubrics", env.project.ID)
		form := url.Values{"name": {""}, "task": {""},
			"criteria[0].name": {"Clear"}, "criteria[0].lo": {"1"}, "criteria[0].hi": {"five"},
			"criteria[1].name": {"clear"}, "criteria[1].lo": {"3"}, "criteria[1].hi": {"2"}}
		add := url.Values{"action": {"add-criterion"}}
		for k, v := range form {
			add[k] = v
		}
		body := env.postForm(action, add).Body.String()
		for _, want := range []string{
			`formaction="` + action + `#criterion-3"`, `id="criterion-2"`, // the next criterion's anchor, and the new one
			`formaction="` + action + `#prompt-preview"`, `formaction="` + action + `#form-error"`, `formaction="` + action + `#criteria"`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("editor after adding a criterion lacks %s", want)
			}
		}
		save := url.Values{"action": {"save"}}
		for k, v := range form {
			save[k] = v
		}
		rec := env.postForm(action, save)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("save: status %d, want 422", rec.Code)
		}
		body = rec.Body.String()
		want := map[string]string{
			"rubric-name":      "The rubric needs a name.",
			"rubric-task":      "The rubric needs a task description",
			"criteria[0].hi":   "The highest score “five” is not a number",
			"criteria[1].name": "Criterion 1 is called “Clear”, the same name as “clear” apart from capitals",
			"criteria[1].hi":   "The highest score (2) must be above the lowest (3).",
		}
		for field, msg := range want {
			i := strings.Index(body, `data-testid="field-error-`+field+`"`)
			if i < 0 {
				t.Errorf("no message next to %s", field)
				continue
			}
			if got := body[i : i+strings.Index(body[i:], "</div>")]; !strings.Contains(got, msg) {
				t.Errorf("next to %s: %q, want %q", field, got, msg)
			}
		}
		if !strings.Contains(body, "Not saved: 5 problems to fix") {
			t.Errorf("the summary does not count the 5 problems")
		}
	})
}

type httptestRecorder = httptest.ResponseRecorder

// TestRubricImportNamesUnknownRatingColumns: a rubric file made for other
// data may name rating columns none of this project's datasets has; it is
// imported as written, and the message names each such column by its
// criterion (before, only the editor's save and the API checked them).
func TestRubricImportNamesUnknownRatingColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		file := strings.Replace(string(demo.RubricYAML()), "human_column: engaging", "human_column: engagement_score", 1)
		rec := env.importRubricFile("other.yaml", []byte(file))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import: status %d: %s", rec.Code, rec.Body.String())
		}
		next := httptest.NewRequest(http.MethodGet, rec.Header().Get("Location"), nil)
		for _, ck := range rec.Result().Cookies() {
			next.AddCookie(ck)
		}
		page := httptest.NewRecorder()
		env.e.ServeHTTP(page, next)
		m := regexp.MustCompile(`data-testid="flash">([^<]*)<`).FindStringSubmatch(page.Body.String())
		if m == nil {
			t.Fatal("no message after the import")
		}
		flash := html.UnescapeString(m[1])
		for _, w := range []string{"engagement_score", "Engaging", "coherent"} {
			if !strings.Contains(flash, w) {
				t.Errorf("the message %q lacks %q", flash, w)
			}
		}
		if strings.Contains(flash, `"coherent" is`) {
			t.Errorf("the message %q names a column the datasets have", flash)
		}
	})
}
