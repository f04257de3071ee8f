package models_test

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestOneLine: a stored name's line breaks (with the spaces around them)
// become one space where a name is made from it or shown on one line.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain name", "plain name"},
		{"Old\n  dialogues", "Old dialogues"},
		{"a \r\n\r\n b", "a b"},
		{"tab\tkept", "tab\tkept"},
		{"\nleading and trailing\n", "leading and trailing"},
		{"u\u2028v\u2029w\u0085x\vy\fz", "u v w x y z"},
	} {
		if got := models.OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestReviewOneLineFields: a reviewer's name and a tag are one line; a
// reason and a comment may have several.
func TestReviewOneLineFields(t *testing.T) {
	score := 3.0
	ok := models.ReviewRating{Reviewer: "Ann", Criterion: "Good", Lo: 1, Hi: 5, Score: &score, Comment: "first\nsecond"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a comment of two lines: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(r *models.ReviewRating)
		want string
	}{
		{"reviewer", func(r *models.ReviewRating) { r.Reviewer = "Ann\nLee" }, "the reviewer name holds a line break"},
		{"tag", func(r *models.ReviewRating) { r.Tags = []string{"tone", "too\nlong"} }, `the tag "too long" holds a line break`},
	} {
		r := ok
		tc.edit(&r)
		err := r.Validate()
		if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), tc.want) {
			t.Errorf("%s: %v, want an invalid error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestComposedNameCuts: a name the product composes is cut to its limit
// on a character boundary, ending in an ellipsis; the source name is what
// is cut, and the words around it stay whole while they fit.
func TestComposedNameCuts(t *testing.T) {
	for _, tc := range []struct {
		limit                 int
		before, source, after string
		want                  string
	}{
		{10, "", "short", "", "short"},
		{10, "", "exactly10!", "", "exactly10!"},
		{10, "", "eleven long", "", "eleven lo…"},
		{6, "", "ééééééé", "", "ééééé…"},                   // characters, not bytes
		{6, "", "ab   cdefgh", "", "ab…"},                  // no space before the ellipsis
		{12, "Run ", "abcdefghij", " (x)", "Run abc… (x)"}, // the source is cut, not its frame
		{12, "Run ", "abcd", " (x)", "Run abcd (x)"},
		{6, "Around ", "run", "", "Aroun…"}, // the frame alone does not fit: the whole is cut
		{0, "", "x", "", ""},
	} {
		got := models.ComposeName(tc.limit, tc.before, tc.source, tc.after)
		if got != tc.want {
			t.Errorf("ComposeName(%d, %q, %q, %q) = %q, want %q", tc.limit, tc.before, tc.source, tc.after, got, tc.want)
		}
		if n := len([]rune(got)); n > tc.limit {
			t.Errorf("ComposeName(%d, ...) = %q has %d characters", tc.limit, got, n)
		}
	}
	if got := models.ShortenName("abcdef", 4); got != "abc…" {
		t.Errorf("ShortenName(abcdef, 4) = %q, want abc…", got)
	}
}
