package static

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A field the server refused (aria-invalid="true", set by the launch form,
// the rubric editor and the upload form beside their messages) has the
// error colour's border, as one whose message sits above it has: the
// message sits below most inputs, where ".field-error + input" never
// applied, so a refused box looked like the others.
func TestInvalidFieldsHaveTheErrorBorder(t *testing.T) {
	css, err := os.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`input[aria-invalid="true"]`, `select[aria-invalid="true"]`, `textarea[aria-invalid="true"]`}
	for _, m := range cssRule.FindAllStringSubmatch(cssComment.ReplaceAllString(string(css), ""), -1) {
		var sels []string
		for _, s := range strings.Split(m[1], ",") {
			sels = append(sels, strings.TrimSpace(s))
		}
		if strings.Contains(m[2], "border-color:var(--bad)") {
			want = slices.DeleteFunc(want, func(w string) bool { return slices.Contains(sels, w) })
		}
	}
	if len(want) > 0 {
		t.Errorf("no rule gives %v the error border", want)
	}
}
