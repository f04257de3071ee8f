package runner

import (
	"maps"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestWithHumans: a held-out copy's row carries the source run's rating of
// the criterion in its human column (rating and text; none where the run
// read none), without the criterion's annotators (explicit columns and
// "<column>@..." keys), other columns as they were, and the source row's
// maps untouched.
func TestWithHumans(t *testing.T) {
	crit := evaluator.Criterion{Name: "Q", HumanColumn: "q", AnnotatorColumns: []string{"rater1"}}
	src := func() models.DatasetRow {
		return models.DatasetRow{ID: 7, ExternalID: "s7", Position: 3,
			Data:    map[string]string{"text": "hello", "q": "2", "q@a": "1", "rater1": "3", "other": "4"},
			Ratings: map[string]*float64{"q": ptr(float64(2)), "q@a": ptr(float64(1)), "q@browser:x": ptr(float64(3)), "rater1": ptr(float64(3)), "other": ptr(float64(4))}}
	}
	for _, tc := range []struct {
		name       string
		byRow      map[int64]*float64
		wantRating *float64
		wantText   string
	}{
		{"rated", map[int64]*float64{7: ptr(2.5)}, ptr(2.5), "2.5"},
		{"rated none", map[int64]*float64{7: nil}, nil, ""},
		{"not listed", map[int64]*float64{8: ptr(float64(1))}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := src()
			out := models.DatasetRow{ExternalID: s.ExternalID, Position: s.Position, Data: s.Data, Ratings: s.Ratings}
			out = withHumans(out, s, crit, tc.byRow)
			if got := out.Ratings["q"]; (got == nil) != (tc.wantRating == nil) || (got != nil && *got != *tc.wantRating) {
				t.Errorf("rating %v, want %v", got, tc.wantRating)
			}
			if v, ok := out.Ratings["q"]; !ok && tc.wantRating == nil {
				t.Errorf("no rating key q (%v): an unrated sample keeps its column, empty", v)
			}
			if out.Data["q"] != tc.wantText {
				t.Errorf("text %q, want %q", out.Data["q"], tc.wantText)
			}
			wantData := map[string]string{"text": "hello", "q": tc.wantText, "other": "4"}
			if !maps.Equal(out.Data, wantData) {
				t.Errorf("data %v, want %v", out.Data, wantData)
			}
			if len(out.Ratings) != 2 || out.Ratings["other"] == nil || *out.Ratings["other"] != 4 {
				t.Errorf("ratings %v, want q and other only", out.Ratings)
			}
			if orig := src(); !maps.Equal(s.Data, orig.Data) || len(s.Ratings) != len(orig.Ratings) || *s.Ratings["q"] != 2 {
				t.Errorf("the source row changed: %v %v", s.Data, s.Ratings)
			}
		})
	}
}
