package handlers

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestMappingSparseRatingTickedByHand: the mapping page does not pre-tick
// a JSONL key present in 1 of 5 rows as a human rating (QA), ticks the
// rating every row has, and still imports the sparse key as a rating
// when ticked by hand.
func TestMappingSparseRatingTickedByHand(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const file = `{"id":"a","reply":"Happy to help with that","quality":4}
{"id":"b","reply":"I cannot say right now","quality":2}
{"id":"c","reply":"Here is the answer you need","quality":5,"retries":3}
{"id":"d","reply":"Let me look into it first","quality":3}
{"id":"e","reply":"That is not something I know","quality":1}
`
		token := env.uploadToken("replies.jsonl", file)
		body := env.get(env.mapPath() + "?token=" + token).Body.String()
		ratingBox := regexp.MustCompile(`name="rating_(\d+)" value="1"( checked)?`)
		ticked := map[string]bool{}
		cols := []string{"id", "reply", "quality", "retries"} // the file's keys in order
		for _, m := range ratingBox.FindAllStringSubmatch(body, -1) {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(cols) {
				ticked[cols[i]] = m[2] != ""
			}
		}
		if !ticked["quality"] {
			t.Errorf("quality (every row rated) is not pre-ticked as a rating: %v", ticked)
		}
		if v, offered := ticked["retries"]; !offered || v {
			t.Errorf("retries (1 of 5 rows): offered %v, pre-ticked %v; want offered, not ticked", offered, v)
		}

		form := url.Values{"token": {token}, "name": {"Replies"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Reply"}, "rating_2": {"1"}, "rating_3": {"1"}}
		rec := env.postForm(env.mapPath(), form)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
		}
		ds, err := env.db.ListDatasets(context.Background(), env.ws.ID, env.project.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range ds {
			if d.Name == "Replies" {
				found = true
				if !slices.Contains(d.RatingColumns, "retries") || !slices.Contains(d.RatingColumns, "quality") {
					t.Errorf("rating columns %v, want quality and retries (ticked by hand)", d.RatingColumns)
				}
			}
		}
		if !found {
			t.Errorf("dataset Replies not imported")
		}
	})
}
