package static

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// notTextInputs are input types that are not text boxes: the browser draws
// them its own way (or not at all), so the text-box rule leaves them alone.
var notTextInputs = map[string]bool{
	"checkbox": true, "radio": true, "hidden": true, "file": true,
	"submit": true, "button": true, "reset": true, "image": true, "range": true, "color": true,
}

var (
	cssComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	cssRule    = regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	inputTag   = regexp.MustCompile(`<input\b[^>]*>`)
	inputType  = regexp.MustCompile(`\btype="([^"]*)"`)
)

// textInputSelectors returns the selectors of app.css's text-box rule: the
// one that gives password fields their border and full width.
func textInputSelectors(t *testing.T) []string {
	t.Helper()
	css, err := os.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cssRule.FindAllStringSubmatch(cssComment.ReplaceAllString(string(css), ""), -1) {
		var sels []string
		for _, s := range strings.Split(m[1], ",") {
			sels = append(sels, strings.Join(strings.Fields(s), ""))
		}
		if slices.Contains(sels, "input[type=password]") && strings.Contains(m[2], "var(--input-line)") {
			return sels
		}
	}
	t.Fatal("app.css has no rule styling input[type=password] with var(--input-line)")
	return nil
}

// TestTextInputsAreStyled: every text-like input, whatever its type (or with
// none, which the browser treats as text), gets the same full-width box. The
// sign-in, setup and invite pages once showed small unstyled Name (no type)
// and Email (type=email) boxes next to a styled Password field.
func TestTextInputsAreStyled(t *testing.T) {
	sels := textInputSelectors(t)
	selectorFor := func(typ string) string {
		if typ == "" {
			return "input:not([type])"
		}
		return "input[type=" + typ + "]"
	}
	// The text-like types, whether or not a page uses them yet.
	for _, typ := range []string{"", "text", "email", "password", "search", "url", "tel", "number"} {
		if !slices.Contains(sels, selectorFor(typ)) {
			t.Errorf("app.css's text-box rule does not cover %s", selectorFor(typ))
		}
	}
	// And every type a page template uses, so a new one is not forgotten.
	files, err := filepath.Glob("../web/*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v (%d)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range inputTag.FindAllString(string(b), -1) {
			typ := ""
			if m := inputType.FindStringSubmatch(tag); m != nil {
				typ = strings.ToLower(m[1])
			} else if strings.Contains(tag, "type=") {
				continue // a type chosen at render time: not checkable here
			}
			if !notTextInputs[typ] && !slices.Contains(sels, selectorFor(typ)) {
				t.Errorf("%s: %s is not covered by app.css's text-box rule (%s)", filepath.Base(f), tag, selectorFor(typ))
			}
		}
	}
}
