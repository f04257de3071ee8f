package models_test

import (
	"math"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestMergeHumanRatingsKeysAnnotatorsByIdentity: browser reviewers are
// annotators by identity (account, else typed name), and imported
// annotators by their column, whatever names they are shown under. An
// account whose email is also a name typed without an account, and an
// imported annotator column that reads like a reviewer's (a dataset
// imported from an export with reviews), stay separate annotators, each
// with its own ratings; the plain key stays with the imported column, then
// with the account. On the old code both pairs were merged into one
// annotator: one rating overwrote the other and the mean and the human
// ceiling were computed on fewer annotators than there are.
func TestMergeHumanRatingsKeysAnnotatorsByIdentity(t *testing.T) {
	ed := int64(7)
	review := func(id int64, who string, user *int64, row int64, score float64) models.ReviewRating {
		return models.ReviewRating{ID: id, RowID: row, Criterion: "Coherent", HumanColumn: "coh", Reviewer: who, UserID: user, Score: ptr(score), Lo: 1, Hi: 3}
	}
	crit := evaluator.Criterion{Name: "Coherent", Lo: 1, Hi: 3, HumanColumn: "coh"}
	cases := []struct {
		name    string
		source  models.HumanSource
		ratings map[string]*float64 // the one row's imported ratings
		reviews []models.ReviewRating
		want    map[string]float64 // annotator key -> rating
	}{
		{
			name:    "account and typed name alike",
			source:  models.HumansBrowser,
			ratings: map[string]*float64{"coh": ptr(2)},
			reviews: []models.ReviewRating{review(1, "ed@a.test", nil, 1, 1), review(2, "ed@a.test", &ed, 1, 3), review(3, "Ann", nil, 1, 2)},
			want:    map[string]float64{"coh@browser:Ann": 2, "coh@browser:ed@a.test": 3, "coh@browser:ed@a.test (typed name)": 1},
		},
		{
			name:    "imported column named like the account",
			source:  models.HumansBoth,
			ratings: map[string]*float64{"coh": ptr(2), "coh@browser:ed@a.test": ptr(1), "coh@x": ptr(2)},
			reviews: []models.ReviewRating{review(1, "ed@a.test", &ed, 1, 3)},
			want:    map[string]float64{"coh@browser:ed@a.test": 1, "coh@x": 2, "coh@browser:ed@a.test (account)": 3},
		},
		{
			name:    "imported column, account and typed name alike",
			source:  models.HumansBoth,
			ratings: map[string]*float64{"coh": ptr(2), "coh@browser:ed": ptr(1)},
			reviews: []models.ReviewRating{review(1, "ed", nil, 1, 2), review(2, "ed", &ed, 1, 3)},
			want:    map[string]float64{"coh@browser:ed": 1, "coh@browser:ed (account)": 3, "coh@browser:ed (typed name)": 2},
		},
		{
			name:    "distinct names keep their plain keys",
			source:  models.HumansBoth,
			ratings: map[string]*float64{"coh": ptr(2), "coh@x": ptr(1)},
			reviews: []models.ReviewRating{review(1, "Ann", nil, 1, 2), review(2, "ed@a.test", &ed, 1, 3)},
			want:    map[string]float64{"coh@x": 1, "coh@browser:Ann": 2, "coh@browser:ed@a.test": 3},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := []models.DatasetRow{{ID: 1, ExternalID: "a", Ratings: c.ratings}}
			merged, got := models.MergeHumanRatings(rows, crit, c.source, c.reviews)
			var want []string
			var sum float64
			for k, v := range c.want {
				want = append(want, k)
				sum += v
			}
			cols := slices.Clone(got.AnnotatorColumns)
			slices.Sort(cols)
			slices.Sort(want)
			if !slices.Equal(cols, want) {
				t.Fatalf("annotators %q, want %q", got.AnnotatorColumns, want)
			}
			for k, v := range c.want {
				if r := merged[0].Ratings[k]; r == nil || *r != v {
					t.Errorf("annotator %q rated %v, want %g", k, r, v)
				}
			}
			mean := sum / float64(len(c.want))
			if h := merged[0].Ratings["coh"]; h == nil || math.Abs(*h-mean) > 1e-9 {
				t.Errorf("human rating %v, want the mean of %d annotators %g", h, len(c.want), mean)
			}
			if r := rows[0].Ratings["coh@browser:ed@a.test"]; c.ratings["coh@browser:ed@a.test"] != nil && *r != 1 {
				t.Errorf("the stored row changed: %v", *r)
			}
		})
	}
}
