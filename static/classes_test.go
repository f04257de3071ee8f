package static

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hookClasses mark elements for scripts and tests only; other selectors
// (their children, element or id rules) style them, so they need no rule.
var hookClasses = map[string]bool{
	"correlations": true, "experiment-chart": true, "held-out-id": true, "histogram": true,
	"launch-form": true, "manage": true, "provenance": true, "rounds": true,
	"run-header": true, "run-progress": true, "runs-filter": true, "scatter": true,
}

var classAttr = regexp.MustCompile(`class="([^"{]*)"`)

// TestEveryTemplateClassIsStyled: a class written in a page template has a
// rule in app.css (in both themes, since the rules use the theme's
// variables), unless it is a known hook. It catches a class added to a
// page and never styled, as field-error and start-guide once were.
func TestEveryTemplateClassIsStyled(t *testing.T) {
	css, err := os.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../web/*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v (%d)", err, len(files))
	}
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range classAttr.FindAllStringSubmatch(string(b), -1) {
			for _, c := range strings.Fields(m[1]) {
				if _, ok := seen[c]; !ok {
					seen[c] = filepath.Base(f)
				}
			}
		}
	}
	for _, must := range []string{"field-error", "start-guide", "review-form"} {
		if _, ok := seen[must]; !ok {
			t.Errorf("no template uses %q any more: update this test", must)
		}
	}
	for c, file := range seen {
		if hookClasses[c] {
			continue
		}
		rule := regexp.MustCompile(`\.` + regexp.QuoteMeta(c) + `([^A-Za-z0-9_-]|$)`)
		if !rule.Match(css) {
			t.Errorf("class %q (first in %s) has no rule in app.css", c, file)
		}
	}
}
