package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIReviews: an editor's token reviews samples through the API (by
// sample id or row id) with the review form's checks; a viewer's token
// lists the reviews, by criterion and a page at a time, but cannot post.
func TestAPIReviews(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("reviewed", 6)
		other := env.ratedDataset("other", 3)
		run := env.storedRun(d, "judged", d.human, nil) // Quality, 1..5
		otherRun := env.storedRun(other, "other judged", other.human, nil)
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		viewer := env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer)
		_, edTok := env.apiToken(env.ws.ID, editor.ID)
		_, viTok := env.apiToken(env.ws.ID, viewer.ID)
		api := newAPIClient(t, env)
		path := fmt.Sprintf("/api/v1/datasets/%d/reviews", d.ds.ID)
		f := func(v float64) *float64 { return &v }
		no := false

		refused := []struct {
			name string
			in   map[string]any
			want int
		}{
			{"rating off the scale", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000", "rating": 6}, http.StatusUnprocessableEntity},
			{"a reason without agreeing or disagreeing", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000", "reason": "why"}, http.StatusUnprocessableEntity},
			{"an empty review", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000"}, http.StatusUnprocessableEntity},
			{"no such criterion", map[string]any{"run_id": run.ID, "criterion": "Fluency", "sample_id": "s000", "rating": 3}, http.StatusUnprocessableEntity},
			{"no such sample", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s999", "rating": 3}, http.StatusNotFound},
			{"a row of another dataset", map[string]any{"run_id": run.ID, "criterion": "Quality", "row_id": other.rowIDs[0], "rating": 3}, http.StatusNotFound},
			{"a run of another dataset", map[string]any{"run_id": otherRun.ID, "criterion": "Quality", "sample_id": "s000", "rating": 3}, http.StatusUnprocessableEntity},
			{"sample and row disagree", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000", "row_id": d.rowIDs[1], "rating": 3}, http.StatusUnprocessableEntity},
		}
		for _, tc := range refused {
			if rec := api.json(http.MethodPost, path, edTok, tc.in); rec.Code != tc.want {
				t.Errorf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
			}
		}
		if rec := api.json(http.MethodPost, path, viTok, map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s000", "rating": 3}); rec.Code != http.StatusForbidden {
			t.Errorf("viewer's review: %d, want 403", rec.Code)
		}
		if all, _ := env.db.ListDatasetReviews(ctx, env.ws.ID, d.ds.ID); len(all) != 0 {
			t.Fatalf("refused reviews were stored: %+v", all)
		}

		accepted := []struct {
			name string
			in   map[string]any
			want APIReview // the fields a review takes from its request
		}{
			{"a disagreement by sample id", map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s002", "rating": 2.5,
				"agree": false, "reason": " misses the point ", "comment": "too generous", "tags": []string{"tone", "tone", " long "}},
				APIReview{SampleID: "s002", RowID: d.rowIDs[2], Rating: f(2.5), Agree: &no, Reason: "misses the point", Comment: "too generous", Tags: []string{"tone", "long"}}},
			{"a comment only, by row id", map[string]any{"run_id": run.ID, "criterion": "Quality", "row_id": d.rowIDs[4], "comment": "fine"},
				APIReview{SampleID: "s004", RowID: d.rowIDs[4], Comment: "fine", Tags: []string{}}},
		}
		var made []APIReview
		for _, tc := range accepted {
			rec := api.json(http.MethodPost, path, edTok, tc.in)
			var got APIReview
			if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
				t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
			}
			w := tc.want
			w.ID, w.CreatedAt = got.ID, got.CreatedAt
			w.DatasetID, w.Reviewer, w.UserID, w.Criterion, w.HumanColumn, w.RunID, w.Lo, w.Hi = d.ds.ID, "ed@a.test", &editor.ID, "Quality", "q", &run.ID, 1, 5
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, w)
			}
			made = append(made, got)
		}
		stored, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.ds.ID, "Quality", 0)
		if err != nil || len(stored) != 2 || stored[0].Reviewer != "ed@a.test" || stored[0].Score == nil || *stored[0].Score != 2.5 {
			t.Fatalf("stored reviews %+v, %v", stored, err)
		}

		// Viewers list; the list is what was posted, oldest first.
		rec := api.get(path, viTok)
		var page Page[APIReview]
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
			t.Fatalf("list: %d %s", rec.Code, rec.Body)
		}
		if len(page.Items) != 2 || page.NextCursor != "" {
			t.Fatalf("list: %+v", page)
		}
		for i := range made {
			if g, w := page.Items[i], made[i]; !reflect.DeepEqual(g.Tags, w.Tags) || g.ID != w.ID || g.SampleID != w.SampleID || g.Comment != w.Comment ||
				(g.Rating == nil) != (w.Rating == nil) || !g.CreatedAt.Time().Equal(w.CreatedAt.Time()) {
				t.Errorf("listed review %d: %+v, posted %+v", i, g, w)
			}
		}
		// One at a time with the cursor; by criterion.
		rec = api.get(path+"?limit=1", viTok)
		_ = json.Unmarshal(rec.Body.Bytes(), &page)
		if len(page.Items) != 1 || page.Items[0].ID != made[0].ID || page.NextCursor == "" {
			t.Fatalf("first page: %+v", page)
		}
		rec = api.get(path+"?limit=1&cursor="+page.NextCursor, viTok)
		page = Page[APIReview]{}
		_ = json.Unmarshal(rec.Body.Bytes(), &page)
		if len(page.Items) != 1 || page.Items[0].ID != made[1].ID || page.NextCursor != "" {
			t.Errorf("second page: %+v", page)
		}
		for crit, want := range map[string]int{"Quality": 2, "Fluency": 0} {
			rec = api.get(path+"?criterion="+crit, viTok)
			page = Page[APIReview]{}
			if json.Unmarshal(rec.Body.Bytes(), &page) != nil || len(page.Items) != want {
				t.Errorf("criterion %s: %d reviews, want %d", crit, len(page.Items), want)
			}
		}
		// Another dataset's reviews are its own.
		rec = api.get(fmt.Sprintf("/api/v1/datasets/%d/reviews", other.ds.ID), viTok)
		page = Page[APIReview]{}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil || len(page.Items) != 0 {
			t.Errorf("other dataset: %d %+v", rec.Code, page)
		}
	})
}

// TestAPIReviewCommentKeepsRating: a comment posted after a rating keeps
// the reviewer's current rating of the sample (before, the comment became
// the current review and the rating dropped out of the report at the next
// recompute, without a word); clear_rating withdraws it on purpose.
func TestAPIReviewCommentKeepsRating(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("reviewed", 4)
		run := env.storedRun(d, "judged", d.human, nil) // Quality, 1..5
		editor := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, editor.ID)
		api := newAPIClient(t, env)
		path := fmt.Sprintf("/api/v1/datasets/%d/reviews", d.ds.ID)
		post := func(in map[string]any) APIReview {
			t.Helper()
			in["run_id"], in["criterion"], in["sample_id"] = run.ID, "Quality", "s001"
			rec := api.json(http.MethodPost, path, tok, in)
			var got APIReview
			if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
				t.Fatalf("post %v: %d %s", in, rec.Code, rec.Body)
			}
			return got
		}
		current := func() *float64 {
			t.Helper()
			all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.ds.ID, "Quality", 0)
			if err != nil {
				t.Fatal(err)
			}
			cur := models.CurrentReviews(all)
			if len(cur) != 1 {
				t.Fatalf("current reviews %+v, want one", cur)
			}
			return cur[0].Score
		}

		post(map[string]any{"rating": 4})
		if got := post(map[string]any{"comment": "on second reading, long-winded"}); got.Rating == nil || *got.Rating != 4 || got.Comment == "" {
			t.Errorf("comment after a rating of 4: stored rating %v, comment %q; want the rating kept", got.Rating, got.Comment)
		}
		if s := current(); s == nil || *s != 4 {
			t.Errorf("current rating after a comment: %v, want 4", s)
		}
		if rec := api.json(http.MethodPost, path, tok, map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s001", "rating": 2, "clear_rating": true}); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("a rating and clear_rating together: %d, want 422", rec.Code)
		}
		if rec := api.json(http.MethodPost, path, tok, map[string]any{"run_id": run.ID, "criterion": "Quality", "sample_id": "s001", "clear_rating": true}); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "say why in comment") {
			t.Errorf("clear_rating alone: %d %s, want 422 asking for a comment", rec.Code, rec.Body)
		}
		if got := post(map[string]any{"clear_rating": true, "comment": "not sure any more"}); got.Rating != nil {
			t.Errorf("clear_rating: stored rating %v, want none", *got.Rating)
		}
		if s := current(); s != nil {
			t.Errorf("current rating after clear_rating: %v, want none", *s)
		}
	})
}
