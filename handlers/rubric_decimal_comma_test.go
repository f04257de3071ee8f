package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestRubricDecimalComma (forms45): the rubric editor refused "0,5" as a
// score end though dataset uploads read decimal commas. A decimal comma is
// now read as a point where that is sure, and the rubric is stored with
// those numbers; "1,000" (a thousand, or 1.000?) is refused with both ways
// to write it, and text that is no number says it may be written with a
// dot or a comma. Nothing is stored for a refused form.
func TestRubricDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		newPath := fmt.Sprintf("/projects/%d/rubrics", env.project.ID)
		for _, tc := range []struct {
			name, lo, hi   string
			wantLo, wantHi float64
			refusal        string // "" when saved
		}{
			{"decimal commas", "0,5", "4,5", 0.5, 4.5, ""},
			{"signed with a comma", "-1,25", " 2,0 ", -1.25, 2, ""},
			{"leading zero is no thousands group", "0,125", "0,875", 0.125, 0.875, ""},
			{"dot still read", "0.5", "5", 0.5, 5, ""},
			{"thousand or decimal", "1", "1,000", 0, 0, `The highest score “1,000” could be 1000 with a thousands separator or 1.000 with a decimal comma: write 1000 or 1.000.`},
			{"comma and dot", "1", "1,000.5", 0, 0, `The highest score “1,000.5” is not a number (write decimals with a dot or a comma, e.g. 2.5 or 2,5, and no thousands separators).`},
			{"two commas", "1,2,3", "5", 0, 0, `The lowest score “1,2,3” is not a number`},
			{"not a number", "one", "5", 0, 0, `The lowest score “one” is not a number (write decimals with a dot or a comma`},
			{"infinity", "1", "Inf", 0, 0, `The highest score “Inf” is not a number (write a finite number`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := env.rubrics()
				form := rubricFormValues("save", tc.lo, tc.hi)
				form.Set("name", "Comma "+tc.name)
				rec := env.postForm(newPath, form)
				after := env.rubrics()
				if tc.refusal != "" {
					if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.refusal) {
						t.Errorf("lo %q hi %q = %d, want 422 saying %q:\n%.2000s", tc.lo, tc.hi, rec.Code, tc.refusal, rec.Body)
					}
					if len(after) != len(before) {
						t.Errorf("a refused form stored %d rubrics", len(after)-len(before))
					}
					return
				}
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("lo %q hi %q = %d, want 303: %.2000s", tc.lo, tc.hi, rec.Code, rec.Body)
				}
				for _, r := range after {
					if r.Name == "Comma "+tc.name {
						if c := r.Criteria[0]; c.Lo != tc.wantLo || c.Hi != tc.wantHi {
							t.Errorf("stored range [%g, %g], want [%g, %g]", c.Lo, c.Hi, tc.wantLo, tc.wantHi)
						}
						return
					}
				}
				t.Errorf("no rubric %q stored", "Comma "+tc.name)
			})
		}
	})
}
