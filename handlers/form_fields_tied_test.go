package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// formSummary is the refused form's summary at the top of the page (""
// when there is none).
func formSummary(body string) string {
	return regexp.MustCompile(`(?s)<div class="flash error" id="form-errors"[^>]*>.*?</div>`).FindString(body)
}

// checkFieldTied fails unless the input id is marked invalid, its
// aria-describedby names id+"-error", and that element, beside the input,
// holds want.
func checkFieldTied(t *testing.T, body, id, want string) {
	t.Helper()
	checkTiedToMessage(t, body, id, want)
	refs := describedBy(openingTag(body, id))
	named := false
	for _, r := range refs {
		named = named || r == id+"-error"
	}
	if !named {
		t.Errorf("input %s: aria-describedby %v does not name %s-error", id, refs, id)
	}
	el := regexp.MustCompile(`(?s)<div class="field-error" id="` + regexp.QuoteMeta(id) + `-error"[^>]*>(.*?)</div>`).FindStringSubmatch(body)
	if el == nil || !strings.Contains(html.UnescapeString(el[1]), want) {
		t.Errorf("no element %s-error saying %q: %q", id, want, el)
	}
}

// checkFieldRefused is checkFieldTied, and the page's summary lists want
// as a link to the input.
func checkFieldRefused(t *testing.T, body, id, want string) {
	t.Helper()
	checkFieldTied(t, body, id, want)
	link := regexp.MustCompile(`<a href="#` + regexp.QuoteMeta(id) + `">([^<]*)</a>`).FindStringSubmatch(formSummary(body))
	if link == nil || !strings.Contains(html.UnescapeString(link[1]), want) {
		t.Errorf("the summary does not link %q to #%s: %s", want, id, formSummary(body))
	}
}

// The New project form says each refusal beside its field, tied to it
// (aria-describedby, aria-invalid), with a summary at the top of the page
// linking to the fields; what was typed is kept and shown escaped. It said
// one message at the top of the form, tied to nothing, and only the first
// of two refusals.
func TestNewProjectFieldErrorsTiedToInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const hostile = `<script>alert("x")</script> & co`
		long := strings.Repeat("n", models.MaxNameLength+1)
		longDesc := strings.Repeat("d", models.MaxDescriptionLength+1)
		nameTooLong := fmt.Sprintf("The project name is %d characters long; the limit is %d.", models.MaxNameLength+1, models.MaxNameLength)
		descTooLong := fmt.Sprintf("The project description is %d characters long; the limit is %d.", models.MaxDescriptionLength+1, models.MaxDescriptionLength)
		tests := []struct {
			name, typedName, typedDesc string
			want                       map[string]string // input id -> message
		}{
			{"empty name", "  ", hostile, map[string]string{"project-name": "Give the project a name, then press Create project again."}},
			{"name too long", long, hostile, map[string]string{"project-name": nameTooLong}},
			{"name on two lines", hostile + "\nsecond line", "", map[string]string{"project-name": "The project name holds a line break"}},
			{"description too long", hostile, longDesc, map[string]string{"project-description": descTooLong}},
			{"both refused at once", "", longDesc, map[string]string{"project-name": "Give the project a name", "project-description": descTooLong}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before, err := env.db.ListProjects(context.Background(), env.ws.ID)
				must(t, err)
				rec := env.postForm("/projects", url.Values{"name": {tt.typedName}, "description": {tt.typedDesc}})
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				for id, msg := range tt.want {
					checkFieldRefused(t, body, id, msg)
				}
				if n := strings.Count(body, `aria-invalid="true"`); n != len(tt.want) {
					t.Errorf("%d inputs marked invalid, want %d", n, len(tt.want))
				}
				if n := strings.Count(formSummary(body), "<li>"); n != len(tt.want) {
					t.Errorf("the summary lists %d messages, want %d: %s", n, len(tt.want), formSummary(body))
				}
				// The typed text is kept, escaped; never raw markup.
				if strings.Contains(body, "<script>alert(") {
					t.Errorf("the typed markup is on the page raw")
				}
				esc := html.EscapeString(hostile)
				if strings.Contains(tt.typedName, hostile) && !strings.Contains(openingTag(body, "project-name"), `value="`+esc) {
					t.Errorf("the typed name is not kept: %s", openingTag(body, "project-name"))
				}
				if tt.typedDesc == hostile && !strings.Contains(body, `>`+esc+`</textarea>`) {
					t.Errorf("the typed description is not kept escaped")
				}
				after, err := env.db.ListProjects(context.Background(), env.ws.ID)
				must(t, err)
				if len(after) != len(before) {
					t.Errorf("projects = %d after a refusal, want %d", len(after), len(before))
				}
			})
		}
	})
}

// The mapping step says the refused name, each label and each choice
// that conflicts beside its input, tied to it, with a summary at the top
// linking to them; the choices made are kept and typed text is escaped.
// They were one line at the top of the page (the name) or rows of the
// problems table, tied to nothing.
func TestMappingFieldErrorsTiedToInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Columns: id (0), text (1), score (2), note (3), blank (4).
		const content = "id,text,score,note,blank\na,first text,4,kind,\nb,second text,2,curt,\n"
		long := strings.Repeat("L", models.MaxNameLength+1)
		good := func(set map[string]string) url.Values {
			f := url.Values{"id_column": {"id"}, "show_1": {"1"}, "label_1": {"Text"}, "rating_2": {"1"}, "name": {`<i>Mine</i> & co`}}
			for k, v := range set {
				if v == "" {
					f.Del(k)
				} else {
					f.Set(k, v)
				}
			}
			return f
		}
		tests := []struct {
			name string
			form url.Values
			want map[string]string // input id -> message
		}{
			{"empty name", good(map[string]string{"name": " "}),
				map[string]string{"dataset-name": "Give the dataset a name, then press Import dataset again."}},
			{"name too long", good(map[string]string{"name": strings.Repeat("d", models.MaxComposedNameLength+1)}),
				map[string]string{"dataset-name": fmt.Sprintf("The dataset name is %d characters long; the limit is %d.", models.MaxComposedNameLength+1, models.MaxComposedNameLength)}},
			{"shown and rated", good(map[string]string{"show_2": "1"}),
				map[string]string{"map-rating-2": "Column “score”: this column is both shown to the judge and used as a human rating"}},
			{"two labels alike", good(map[string]string{"label_1": "<b>Reply</b>", "show_3": "1", "label_3": "<b>reply</b>"}),
				map[string]string{"map-label-3": "have the same label “<b>reply</b>”"}},
			{"label too long", good(map[string]string{"label_1": long}),
				map[string]string{"map-label-1": fmt.Sprintf("The label of column “text” is %d characters long; the limit is %d.", models.MaxNameLength+1, models.MaxNameLength)}},
			{"label on two lines", good(map[string]string{"label_1": "<b>Te</b>\nxt"}),
				map[string]string{"map-label-1": "Column “text”: the label “<b>Te</b>␊xt” holds a line break"}},
			{"id column not in the file", good(map[string]string{"id_column": "<nope>"}),
				map[string]string{"id-column": "Column “<nope>”: the id column is not in the file"}},
			{"annotator column not in the file", good(map[string]string{"annotator_column": "<who>"}),
				map[string]string{"annotator-column": "Column “<who>”: the annotator column is not in the file"}},
			{"a field empty in every row", good(map[string]string{"show_4": "1"}),
				map[string]string{"map-show-4": "Column “blank”: this field is empty in every row"}},
			{"name and a choice at once", good(map[string]string{"name": "", "show_2": "1"}),
				map[string]string{"dataset-name": "Give the dataset a name", "map-rating-2": "both shown to the judge and used as a human rating"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				token := env.uploadToken("data.csv", content)
				before := env.countDatasets()
				tt.form.Set("token", token)
				rec := env.postForm(env.mapPath(), tt.form)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("POST map = %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				for id, msg := range tt.want {
					checkFieldRefused(t, body, id, msg)
				}
				if n := strings.Count(body, `aria-invalid="true"`); n != len(tt.want) {
					t.Errorf("%d inputs marked invalid, want %d", n, len(tt.want))
				}
				// A choice's problem is beside it, not in the file's table.
				if strings.Contains(body, `data-testid="import-problems"`) {
					t.Errorf("the file's problems table lists a choice's problem")
				}
				for _, raw := range []string{"<b>reply</b>", "<b>Te</b>", "<i>Mine</i>", "<nope>", "<who>"} {
					if strings.Contains(body, raw) {
						t.Errorf("typed text %s is on the page raw", raw)
					}
				}
				// What was chosen and typed is kept.
				if name := tt.form.Get("name"); strings.TrimSpace(name) != "" && !strings.Contains(openingTag(body, "dataset-name"), `value="`+html.EscapeString(name)+`"`) {
					t.Errorf("the typed name is not kept: %s", openingTag(body, "dataset-name"))
				}
				for _, box := range []string{"show_1", "show_2", "show_3", "show_4", "rating_2"} {
					id := "map-" + strings.Replace(box, "_", "-", 1)
					if checked := strings.Contains(openingTag(body, id), " checked"); checked != (tt.form.Get(box) != "") {
						t.Errorf("%s is shown checked=%v, was sent %q", id, checked, tt.form.Get(box))
					}
				}
				if got := env.countDatasets(); got != before {
					t.Errorf("datasets = %d after a refused mapping, want %d", got, before)
				}
			})
		}

		// No column shown: the message is about the boxes as a whole,
		// beside the columns table; every "judge sees it" box points to it.
		token := env.uploadToken("data.csv", content)
		body := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Mine"}, "id_column": {"id"}, "rating_2": {"1"}}).Body.String()
		const want = "No column is shown to the judge: choose at least one field."
		if !strings.Contains(body, `<div class="field-error" id="mapping-columns-error" data-testid="field-error-mapping-columns"><p class="small">`+want+`</p></div>`) {
			t.Errorf("no message beside the columns table saying %q", want)
		}
		if !strings.Contains(formSummary(body), `<a href="#mapping-columns">`+want+`</a>`) || !strings.Contains(body, `id="mapping-columns"`) {
			t.Errorf("the summary does not link %q to the columns: %s", want, formSummary(body))
		}
		for i := 0; i < 5; i++ {
			id := fmt.Sprintf("map-show-%d", i)
			if refs := describedBy(openingTag(body, id)); len(refs) != 1 || refs[0] != "mapping-columns-error" {
				t.Errorf("%s is described by %v, want the columns' message", id, refs)
			}
		}
	})
}

// A mapping form refused and shown again keeps the labels typed for the
// columns left unticked, escaped; only a column nobody labelled gets its
// default label. They were reset to the defaults.
func TestMappingKeepsLabelsOfUntickedColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Columns: id (0), text (1), score (2), note (3).
		const content = "id,text,score,note\na,first text,4,kind\nb,second text,2,curt\n"
		tests := []struct {
			name string
			form url.Values
			want map[string]string // label input id -> value shown (unescaped)
		}{
			{"name refused", url.Values{"name": {" "}, "show_1": {"1"}, "label_1": {"Reply"}, "label_3": {`<b>Reviewer's</b> note & "more"`}, "rating_2": {"1"}},
				map[string]string{"map-label-1": "Reply", "map-label-3": `<b>Reviewer's</b> note & "more"`, "map-label-0": "Id", "map-label-2": "Score"}},
			{"choice refused", url.Values{"name": {"Mine"}, "show_1": {"1"}, "show_2": {"1"}, "rating_2": {"1"}, "label_2": {"Points"}, "label_3": {"  Note to self  "}},
				map[string]string{"map-label-2": "Points", "map-label-3": "Note to self", "map-label-1": "Text"}},
			{"blank label of an unticked column", url.Values{"name": {""}, "show_1": {"1"}, "label_3": {"   "}},
				map[string]string{"map-label-3": "Note"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.form.Set("token", env.uploadToken("data.csv", content))
				tt.form.Set("id_column", "id")
				rec := env.postForm(env.mapPath(), tt.form)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("POST map = %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				if strings.Contains(body, "<b>Reviewer") {
					t.Errorf("a typed label is on the page raw")
				}
				for id, want := range tt.want {
					m := regexp.MustCompile(`\svalue="([^"]*)"`).FindStringSubmatch(openingTag(body, id))
					if m == nil || html.UnescapeString(m[1]) != want {
						t.Errorf("%s shows %q, want %q: %s", id, m, want, openingTag(body, id))
					}
				}
			})
		}
	})
}
