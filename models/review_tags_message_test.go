package models_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewTooManyTagsSaysWhatToDo: a review with more tags than it takes
// is refused with how many it has and how many to remove (it said only
// "at most 10 tags").
func TestReviewTooManyTagsSaysWhatToDo(t *testing.T) {
	for _, n := range []int{10, 11, 14} {
		tags := make([]string, n)
		for i := range tags {
			tags[i] = fmt.Sprintf("tag%d", i)
		}
		err := models.ReviewRating{Reviewer: "Ann", Criterion: "coherence", Lo: 1, Hi: 5, Comment: "ok", Tags: tags}.Validate()
		if n <= 10 {
			if err != nil {
				t.Errorf("%d tags refused: %v", n, err)
			}
			continue
		}
		want := fmt.Sprintf("at most 10 tags and this one has %d: remove %d, then save again", n, n-10)
		if models.ErrorCode(err) != models.EInvalid || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d tags: %v, want an invalid-input error saying %q", n, err, want)
		}
	}
}
