package web

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewKeysHelpIsTrue: on every scale, the queue's keys box names
// exactly the number keys the form answers to, and each rates the level it
// says (1 to 10 has no "10" key: 0 rates 10 there, and the box says so;
// a number field has no rating key, and the box says that).
func TestReviewKeysHelpIsTrue(t *testing.T) {
	levels := func(lo, hi float64) []float64 {
		var out []float64
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
		return out
	}
	tests := []struct {
		name   string
		lo, hi float64
		levels []float64
		keys   map[string]string // key -> level it rates
	}{
		{"1 to 3", 1, 3, levels(1, 3), map[string]string{"1": "1", "2": "2", "3": "3"}},
		{"1 to 5", 1, 5, levels(1, 5), map[string]string{"1": "1", "2": "2", "3": "3", "4": "4", "5": "5"}},
		{"0 to 5", 0, 5, levels(0, 5), map[string]string{"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "5": "5"}},
		{"1 to 10", 1, 10, levels(1, 10), map[string]string{"1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "8": "8", "9": "9", "0": "10"}},
		{"-2 to 2", -2, 2, levels(-2, 2), map[string]string{"0": "0", "1": "1", "2": "2"}},
		{"0 to 100", 0, 100, nil, map[string]string{}},
		{"decimals 0.5 to 2.5", 0.5, 2.5, nil, map[string]string{}},
	}
	keyAttr := regexp.MustCompile(`value="(-?[0-9.]+)" data-review-key="([0-9])"`)
	kbd := regexp.MustCompile(`<kbd>([0-9])</kbd>`)
	helpBox := regexp.MustCompile(`(?s)data-testid="review-keys">.*?</div>`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := &ReviewForm{Action: "/datasets/1/review", RunID: 1, RowID: 1, Criterion: "Q", Lo: tt.lo, Hi: tt.hi, Levels: tt.levels, Reviewer: "Ann"}
			v := ReviewQueueView{Dataset: models.Dataset{ID: 1}, Run: models.Run{ID: 1}, Criteria: []string{"Q"}, Total: 1, CanRate: true,
				Sample: &ReviewSample{RowID: 1}, Form: form, Lo: tt.lo, Hi: tt.hi}
			var buf bytes.Buffer
			if err := ReviewQueuePage(v).Render(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			// Without levels the rating is typed: a text field with a
			// decimal keyboard, so "2,5" reaches the server (a number
			// field sent "" for it, which keeps the previous rating).
			if field := `type="text" inputmode="decimal" name="score"`; (tt.levels == nil) != strings.Contains(page, field) {
				t.Errorf("typed rating field %q shown: %v, want %v", field, strings.Contains(page, field), tt.levels == nil)
			}
			got := map[string]string{}
			for _, m := range keyAttr.FindAllStringSubmatch(page, -1) {
				got[m[2]] = m[1]
			}
			if len(got) != len(tt.keys) {
				t.Errorf("form keys %v, want %v", got, tt.keys)
			}
			for k, l := range tt.keys {
				if got[k] != l {
					t.Errorf("key %s rates %q, want %s", k, got[k], l)
				}
			}
			box := helpBox.FindString(page)
			var said []string
			for _, m := range kbd.FindAllStringSubmatch(box, -1) {
				said = append(said, m[1])
			}
			// A run "a…b" names its ends: every key in between is named too.
			var named []string
			for i := 0; i < len(said); i++ {
				named = append(named, said[i])
				if i+1 < len(said) && regexp.MustCompile(`<kbd>`+said[i]+`</kbd>…<kbd>`+said[i+1]+`</kbd>`).MatchString(box) {
					a, _ := strconv.Atoi(said[i])
					b, _ := strconv.Atoi(said[i+1])
					for k := a + 1; k < b; k++ {
						named = append(named, strconv.Itoa(k))
					}
				}
			}
			for _, k := range named {
				if _, ok := got[k]; !ok {
					t.Errorf("the keys box names key %s, which rates nothing on %s:\n%s", k, tt.name, box)
				}
			}
			for k := range got {
				if !slices.Contains(named, k) {
					t.Errorf("key %s rates but the keys box does not say so:\n%s", k, box)
				}
			}
			if got["0"] == "10" && !regexp.MustCompile(`<kbd>0</kbd>: rates 10`).MatchString(box) {
				t.Errorf("the keys box does not say 0 rates 10:\n%s", box)
			}
		})
	}
}
