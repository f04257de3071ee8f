package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestRubricFileErrorsNameTheirLines (forms46): importing a rubric file
// named the line of a problem found while reading it, but only the first
// problem, and the problems found when the rubric was saved (a text
// longer than a store keeps, more criteria than a rubric has) named no
// line at all ("the criterion 2 description is 5001 characters long").
// Every problem of the file is now listed at once, in the file's order,
// each with its line and the field; nothing is stored.
func TestRubricFileErrorsNameTheirLines(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		long := strings.Repeat("x", 5001)
		var many strings.Builder
		many.WriteString("task: t\ncriteria:\n")
		for i := range 51 {
			fmt.Fprintf(&many, "  - {name: C%d, lo: 1, hi: 5}\n", i+1)
		}
		cases := []struct {
			name, file string
			want       []string // each problem, in this order
		}{
			{"several problems at once",
				"task: Judge the reply.\n" + // 1
					"criteria:\n" + // 2
					"  - name: Fluency\n" + // 3
					"    lo: 1\n" + // 4
					"    hi: 5\n" + // 5
					"  - name: Relevance\n" + // 6
					"    description: " + long + "\n" + // 7
					"    lo: 5\n" + // 8
					"    hi: 1\n" + // 9
					"  - name: fluency\n" + // 10
					"    lo: 1\n" + // 11
					"    hi: 5\n" + // 12
					"    levels: {low: \"bad\\0\"}\n", // 13
				[]string{
					`line 7: criterion 2 (“Relevance”): the description is 5001 characters long; the limit is 5000: shorten it`,
					`line 8: criterion "Relevance": the range [5, 1] is empty: the low end must be below the high end`,
					`line 10: criterion "fluency" appears twice: criterion names must be unique (the first is on line 3): rename or remove one of them`,
					`line 13: criterion 3 ("fluency"): the low level description holds a control character (U+0000, NUL), which is not text`,
				}},
			{"one problem found only by the save", "task: " + strings.Repeat("t", 20001) + "\ncriteria:\n  - {name: A, lo: 1, hi: 5}\n",
				[]string{`line 1: the task is 20001 characters long; the limit is 20000: shorten it`}},
			{"more criteria than a rubric has", many.String(),
				[]string{`line 53: the file has 51 criteria; a rubric has at most 50: remove criterion 51 and those after it`}},
			{"a criterion's name too long, no task", "criteria:\n  - name: " + strings.Repeat("n", 201) + "\n    lo: 1\n    hi: 5\n",
				[]string{`line 1: task description is empty`, `line 2: criterion 1: the name is 201 characters long; the limit is 200: shorten it`}},
		}
		before := env.rubrics()
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.importRubricFile("judge-<b>.yaml", []byte(tc.file))
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				i := strings.Index(body, `data-testid="import-error"`)
				if i < 0 {
					t.Fatal("no import error shown")
				}
				box := body[i : i+strings.Index(body[i:], "</div>")]
				if strings.Contains(box, "judge-<b>") || !strings.Contains(box, "judge-&lt;b&gt;.yaml") {
					t.Errorf("the file's name is not shown escaped: %.300s", box)
				}
				var got []string
				if len(tc.want) > 1 {
					if !strings.Contains(box, fmt.Sprintf("%d problems, nothing imported", len(tc.want))) {
						t.Errorf("the box does not say %d problems: %.300s", len(tc.want), box)
					}
					for _, m := range regexp.MustCompile(`<li>([^<]*)</li>`).FindAllStringSubmatch(box, -1) {
						got = append(got, html.UnescapeString(m[1]))
					}
				} else {
					got = []string{html.UnescapeString(box)}
				}
				if len(got) != len(tc.want) {
					t.Fatalf("%d problems shown, want %d: %q", len(got), len(tc.want), got)
				}
				for k, want := range tc.want {
					if !strings.Contains(got[k], want) {
						t.Errorf("problem %d = %q, want it to say %q", k+1, shorten(got[k]), want)
					}
				}
			})
		}
		if after := env.rubrics(); len(after) != len(before) {
			t.Errorf("%d rubrics stored from refused files", len(after)-len(before))
		}
	})
}

// shorten cuts a long message for a test's output.
func shorten(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}
