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
