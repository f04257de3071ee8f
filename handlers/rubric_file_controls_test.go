package handlers

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestRubricImportRefusesControlCharacters: the control-character check of
// every request sees a multipart file's name, not its contents, and the
// rubric file parser refused control characters only in criterion names
// and labels: a NUL or an escape in a rubric file's task, a description, a
// level, a column or an example (written "\0" or "\e" in YAML, "\u0000" in
// JSON) was stored (PostgreSQL refuses NUL in text). Each is refused with
// 422 naming the field, its line (forms45) and the character; tabs and line breaks in texts of
// several lines stay allowed.
func TestRubricImportRefusesControlCharacters(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		crit := func(extra string) string {
			return "task: a reply\ncriteria:\n  - name: Good\n    lo: 1\n    hi: 5\n" + extra
		}
		cases := []struct{ name, file, want string }{
			{"task", "task: \"a\\0reply\"\ncriteria:\n  - {name: Good, lo: 1, hi: 5}\n", "line 1: the task holds a control character (U+0000, NUL)"},
			{"task, the byte as is", "task: a\x01reply\ncriteria:\n  - {name: Good, lo: 1, hi: 5}\n", "line 1: the task holds a control character (U+0001)"},
			{"task in JSON", `{"task": "a\u0000reply", "criteria": [{"name": "Good", "lo": 1, "hi": 5}]}`, "line 1: the task holds a control character (U+0000, NUL)"},
			{"description", crit("    description: \"is it \\e[31mgood\"\n"), `line 6: criterion 1 ("Good"): the description holds a control character (U+001B)`},
			{"level", crit("    levels: {low: \"bad\\0\", middle: ok, high: great}\n"), `line 6: criterion 1 ("Good"): the low level description holds a control character (U+0000, NUL)`},
			{"human column", crit("    human_column: \"good\\0\"\n"), `line 6: criterion 1 ("Good"): the human_column holds a control character (U+0000, NUL)`},
			{"annotator column", crit("    annotator_columns: [a1, \"a\\x012\"]\n"), `line 6: criterion 1 ("Good"): annotator column 2 holds a control character (U+0001)`},
			{"field column", "task: a reply\nfields:\n  - {column: \"resp\\0onse\", label: Reply}\ncriteria:\n  - {name: Good, lo: 1, hi: 5}\n", "line 3: field 1: the column holds a control character (U+0000, NUL)"},
			{"example text", crit("    examples:\n      - {sample_id: s1, score: 3, fields: [{label: Reply, value: \"fine\\0\"}]}\n"),
				`line 7: criterion 1 ("Good"), example 1: the text of field 1 holds a control character (U+0000, NUL)`},
			{"example reason", crit("    examples:\n      - {sample_id: s1, score: 3, reason: \"\\0\", fields: [{label: Reply, value: fine}]}\n"),
				`line 7: criterion 1 ("Good"), example 1: the reason holds a control character (U+0000, NUL)`},
			{"example sample id", crit("    examples:\n      - {sample_id: \"s\\0\", score: 3, fields: [{label: Reply, value: fine}]}\n"),
				`line 7: criterion 1 ("Good"), example 1: the sample_id holds a control character (U+0000, NUL)`},
			// Already refused as not one line; the message names it too.
			{"criterion name", "task: t\ncriteria:\n  - {name: \"Go\\0od\", lo: 1, hi: 5}\n", "line 3: criterion 1 (\"Go\\x00od\"): the name holds a control character (U+0000)"},
		}
		before, _ := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.importRubricFile("controls.yaml", []byte(tc.file))
				body := html.UnescapeString(rec.Body.String())
				if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "controls.yaml: "+tc.want) {
					i := strings.Index(body, `data-testid="import-error"`)
					t.Errorf("status %d, want 422 saying %q; shown: %.300s", rec.Code, tc.want, body[max(i, 0):])
				}
			})
		}
		after, _ := env.db.ListRubrics(ctx, env.ws.ID, env.project.ID)
		if len(after) != len(before) {
			t.Errorf("%d rubrics stored from files with control characters", len(after)-len(before))
		}
		// Tabs and line breaks in texts of several lines are text.
		ok := "task: \"a reply\\n\\tindented\"\ncriteria:\n  - name: Good\n    description: \"first\\r\\nsecond\\tcolumn\"\n    lo: 1\n    hi: 5\n"
		if rec := env.importRubricFile("fine.yaml", []byte(ok)); rec.Code != http.StatusSeeOther {
			t.Errorf("a file with tabs and line breaks in its texts: %d, want 303", rec.Code)
		}
	})
}
