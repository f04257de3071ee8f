package handlers

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Saving a rubric whose criterion names no human rating column, in a
// project whose datasets hold rating columns, saves it and warns: its
// runs will show no agreement with the ratings, and the warning names
// the columns to choose from. A criterion with a column saves quietly.
// The editor explains the column beside its select.
func TestRubricSavedWithoutHumanColumnWarns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, human string
			wantWarn    bool
		}{
			{"no human column", "", true},
			{"human column chosen", "overall", false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				form := rubricFormValues("save", "1", "5")
				form.Set("criteria[0].human", tc.human)
				rec := env.postForm(fmt.Sprintf("/projects/%d/rubrics", env.project.ID), form)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("save = %d: %s", rec.Code, rec.Body)
				}
				var kind, text string
				for _, ck := range rec.Result().Cookies() {
					if ck.Name == flashCookie {
						k, enc, _ := strings.Cut(ck.Value, ":")
						b, _ := base64.RawURLEncoding.DecodeString(enc)
						kind, text = k, string(b)
					}
				}
				if !strings.Contains(text, `Rubric “Helpfulness” saved.`) {
					t.Fatalf("flash %q", text)
				}
				if got := kind == "warning"; got != tc.wantWarn {
					t.Fatalf("flash kind %q (%s), want warning %v", kind, text, tc.wantWarn)
				}
				if !tc.wantWarn {
					return
				}
				// The editor says what the column is for, next to it.
				editor := env.get(fmt.Sprintf("/projects/%d/rubrics/new", env.project.ID)).Body.String()
				if !strings.Contains(editor, `aria-describedby="criteria[0].human-help"`) || !strings.Contains(editor, `data-testid="human-column-help"`) {
					t.Error("the editor does not explain the human rating column")
				}
				// The demo dataset's rating columns.
				for _, want := range []string{`“Helpful” has no human rating column`, `“coherent”`, `“engaging”`, `“overall”`, `Human rating column`} {
					if !strings.Contains(text, want) {
						t.Errorf("the warning lacks %q: %s", want, text)
					}
				}
			})
		}
	})
}

func TestJoinQuoted(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, `“a”`},
		{[]string{"a", "b"}, `“a” and “b”`},
		{[]string{"a", "b", "c"}, `“a”, “b” and “c”`},
	} {
		if got := joinQuoted(tc.in); got != tc.want {
			t.Errorf("joinQuoted(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
