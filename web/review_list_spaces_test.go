package web

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewListSeparatesItsWords (teamtry48): a review list read
// "ann@example.org(no longer a member)rated 3" and "owner@t.testrated 3"
// on the queue and the sample page: the words after the reviewer's name
// had no space before them. Each review now reads as a sentence.
func TestReviewListSeparatesItsWords(t *testing.T) {
	three, two := 3.0, 2.5
	no := false
	at := time.Date(2026, 12, 6, 8, 17, 0, 0, time.UTC)
	uid := int64(4)
	for _, tc := range []struct {
		name string
		r    models.ReviewRating
		rc   *ReviewCounting
		want string
	}{
		{"an account with a display name", models.ReviewRating{ID: 1, Reviewer: "ann@example.org", ReviewerName: "Ann Lee", UserID: &uid, Score: &three, CreatedAt: at},
			nil, "Ann Lee ann@example.org rated 3 2026-12-06 08:17 UTC"},
		{"a name typed without an account", models.ReviewRating{ID: 2, Reviewer: "Bob", Score: &two, CreatedAt: at},
			nil, "Bob rated 2.5 2026-12-06 08:17 UTC"},
		{"a former member who disagreed", models.ReviewRating{ID: 3, Reviewer: "cy@example.org", UserID: &uid, Score: &three, Agree: &no, Reason: "off topic", FormerMember: true, CreatedAt: at},
			nil, "cy@example.org (no longer a member) rated 3 · disagrees with the judge: off topic 2026-12-06 08:17 UTC"},
		{"excluded", models.ReviewRating{ID: 4, Reviewer: "dee@example.org", UserID: &uid, Score: &three, Excluded: true, CreatedAt: at},
			nil, "dee@example.org (ratings excluded) rated 3 2026-12-06 08:17 UTC"},
		{"given after the recompute", models.ReviewRating{ID: 9, Reviewer: "eve@example.org", UserID: &uid, Score: &three, CreatedAt: at},
			&ReviewCounting{UptoRatingID: 5}, "eve@example.org rated 3 (not in the report yet) 2026-12-06 08:17 UTC"},
		{"withdrawn after the recompute", models.ReviewRating{ID: 10, Reviewer: "fay@example.org", UserID: &uid, Comment: "wrong sample", CreatedAt: at},
			&ReviewCounting{UptoRatingID: 5, StillCounted: map[int64]bool{10: true}},
			"fay@example.org withdrew their rating (the report still counts it until its next recompute) wrong sample 2026-12-06 08:17 UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ReviewList([]models.ReviewRating{tc.r}, tc.rc).Render(t.Context(), &buf); err != nil {
				t.Fatal(err)
			}
			// The text a reader sees: tags dropped (a block's own line
			// counts as a space), runs of space read as one.
			html := regexp.MustCompile(`</?div[^>]*>`).ReplaceAllString(buf.String(), " ")
			text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(html, "")
			text = strings.Join(strings.Fields(text), " ")
			if text != tc.want {
				t.Errorf("the review reads\n%q, want\n%q", text, tc.want)
			}
		})
	}
}
