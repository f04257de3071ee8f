package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestRubricEditorNamesTheDuplicateAndRefusesAbsurdScales: criteria named
// "Quality" and "quality" are refused with each spelled as typed (QA: the
// message said criterion 1 "is also called "quality"", the second's
// spelling); a scale from 0 to 1e308 is refused beside the highest score
// with the limit, while 0 to 1,000,000 is saved.
func TestRubricEditorNamesTheDuplicateAndRefusesAbsurdScales(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		newPath := fmt.Sprintf("/projects/%d/rubrics", env.project.ID)
		fieldError := func(body, field string) string {
			m := regexp.MustCompile(`(?s)data-testid="field-error-` + regexp.QuoteMeta(field) + `">(.*?)</div>`).FindStringSubmatch(body)
			if m == nil {
				return ""
			}
			return html.UnescapeString(m[1])
		}
		two := func(first, second string) url.Values {
			f := rubricFormValues("save", "1", "5")
			f.Set("criteria[0].name", first)
			f.Set("criteria[1].name", second)
			f.Set("criteria[1].lo", "1")
			f.Set("criteria[1].hi", "5")
			return f
		}
		for _, tc := range []struct {
			name      string
			form      url.Values
			status    int
			field     string
			want, not string
		}{
			{"names apart from capitals", two("Quality", "quality"), http.StatusUnprocessableEntity, "criteria[1].name",
				`Criterion 1 is called “Quality”, the same name as “quality” apart from capitals`, `also called “quality”`},
			{"the same name", two("Quality", "Quality"), http.StatusUnprocessableEntity, "criteria[1].name",
				`Criterion 1 is also called “Quality”`, ""},
			{"scale 0 to 1e308", rubricFormValues("save", "0", "1e308"), http.StatusUnprocessableEntity, "criteria[0].hi",
				"both ends must lie between -1,000,000 and 1,000,000", ""},
			{"scale 1 million apart and more", rubricFormValues("save", "-1", "1000000"), http.StatusUnprocessableEntity, "criteria[0].hi",
				"at most 1,000,000 apart", ""},
			{"scale 0 to 1,000,000", rubricFormValues("save", "0", "1000000"), http.StatusSeeOther, "", "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.postForm(newPath, tc.form)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d: %.500s", rec.Code, tc.status, rec.Body.String())
				}
				if tc.field == "" {
					return
				}
				got := fieldError(rec.Body.String(), tc.field)
				if !strings.Contains(got, tc.want) {
					t.Errorf("beside %s: %q, want %q", tc.field, got, tc.want)
				}
				if tc.not != "" && strings.Contains(got, tc.not) {
					t.Errorf("beside %s: %q still says %q", tc.field, got, tc.not)
				}
			})
		}
	})
}
