package static

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestUserTextTakesItsOwnDirection: a right-to-left text (Arabic, Hebrew)
// in a table cell or a text block showed its final "." or "?" beside its
// first word, as the page is left to right: the elements that show
// uploaded texts and the judge's answers set unicode-bidi:plaintext.
func TestUserTextTakesItsOwnDirection(t *testing.T) {
	css, err := os.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	comments := regexp.MustCompile(`(?s)/\*.*?\*/`)
	rule := regexp.MustCompile(`([^{}]+)\{[^}]*unicode-bidi:\s*plaintext`)
	covered := map[string]bool{}
	for _, m := range rule.FindAllStringSubmatch(comments.ReplaceAllString(string(css), ""), -1) {
		for _, sel := range strings.Split(m[1], ",") {
			covered[strings.TrimSpace(sel)] = true
		}
	}
	for _, sel := range []string{"td", "th", "pre", ".pre"} {
		if !covered[sel] {
			t.Errorf("no rule gives %s unicode-bidi:plaintext", sel)
		}
	}
}
