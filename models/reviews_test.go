package models_test

import (
	"math"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func ptr(v float64) *float64 { return &v }

// reviewDataset stores a three-sample dataset whose "coh" column is the
// imported human rating and, on the first two samples, two imported
// annotators' ratings.
func reviewDataset(t *testing.T, db *models.DB) (models.Workspace, models.Dataset, []models.DatasetRow) {
	t.Helper()
	ctx := t.Context()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "P"}
	if err := db.CreateProject(ctx, &p); err != nil {
		t.Fatal(err)
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"id", "text", "coh"},
		Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"coh"}}
	rows := []models.DatasetRow{
		{Position: 1, ExternalID: "a", Data: map[string]string{"text": "A"}, Ratings: map[string]*float64{"coh": ptr(2), "coh@x": ptr(1), "coh@y": ptr(3)}},
		{Position: 2, ExternalID: "b", Data: map[string]string{"text": "B"}, Ratings: map[string]*float64{"coh": ptr(4), "coh@x": ptr(4), "coh@y": ptr(4)}},
		{Position: 3, ExternalID: "c", Data: map[string]string{"text": "C"}, Ratings: map[string]*float64{"coh": nil}},
	}
	if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		t.Fatal(err)
	}
	stored, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ws, ds, stored
}

// TestReviewRatingsAndHumanSources: every submission is kept with who and
// when, a reviewer's latest one counts, and HumanRatings merges the
// browser ratings into the human side as the source says, up to the
// recorded watermark only.
func TestReviewRatingsAndHumanSources(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, ds, rows := reviewDataset(t, db)
		crit := evaluator.Criterion{Name: "Coherence", Lo: 1, Hi: 5, HumanColumn: "coh"}
		agree, disagree := true, false
		add := func(r models.ReviewRating) models.ReviewRating {
			t.Helper()
			r.WorkspaceID, r.DatasetID, r.Criterion, r.Lo, r.Hi = ws.ID, ds.ID, "Coherence", 1, 5
			got, err := db.AddReviewRating(ctx, r)
			if err != nil {
				t.Fatalf("add %+v: %v", r, err)
			}
			return got
		}
		// Refusals.
		bad := []struct {
			name string
			r    models.ReviewRating
			code string
		}{
			{"no reviewer", models.ReviewRating{RowID: rows[0].ID, Score: ptr(3)}, models.EInvalid},
			{"off the scale", models.ReviewRating{RowID: rows[0].ID, Reviewer: "ann", Score: ptr(6)}, models.EInvalid},
			{"empty review", models.ReviewRating{RowID: rows[0].ID, Reviewer: "ann"}, models.EInvalid},
			{"reason without a side", models.ReviewRating{RowID: rows[0].ID, Reviewer: "ann", Score: ptr(3), Reason: "why"}, models.EInvalid},
			{"row of another dataset", models.ReviewRating{RowID: rows[2].ID + 1000, Reviewer: "ann", Score: ptr(3)}, models.ENotFound},
		}
		for _, b := range bad {
			b.r.WorkspaceID, b.r.DatasetID, b.r.Criterion, b.r.Lo, b.r.Hi = ws.ID, ds.ID, "Coherence", 1, 5
			if _, err := db.AddReviewRating(ctx, b.r); models.ErrorCode(err) != b.code {
				t.Errorf("%s: err %v, want %s", b.name, err, b.code)
			}
		}

		first := add(models.ReviewRating{RowID: rows[0].ID, Reviewer: "ann", Score: ptr(5), Agree: &agree})
		add(models.ReviewRating{RowID: rows[0].ID, Reviewer: "ann", Score: ptr(4), Agree: &disagree, Reason: "too kind", Comment: "see turn 2", Tags: []string{"tone"}})
		add(models.ReviewRating{RowID: rows[1].ID, Reviewer: "bob", Score: ptr(2)})
		if first.CreatedAt.IsZero() || first.ID == 0 {
			t.Fatalf("stored review has no id or time: %+v", first)
		}
		src, err := db.SetRunHumanSource(ctx, ws.ID, 999999, models.HumansBoth, "x")
		if models.ErrorCode(err) != models.ENotFound {
			t.Errorf("source of a missing run: %+v, %v; want not found", src, err)
		}
		all, err := db.ListReviewRatings(ctx, ws.ID, ds.ID, "Coherence", 0)
		if err != nil || len(all) != 3 {
			t.Fatalf("history: %d reviews, %v; want all 3 kept", len(all), err)
		}
		cur := models.CurrentReviews(all)
		if len(cur) != 2 || *cur[0].Score != 4 || cur[0].Reason != "too kind" || cur[0].Agree == nil || *cur[0].Agree {
			t.Fatalf("current reviews %+v: want ann's latest (4, disagrees: too kind) and bob's", cur)
		}
		watermark := all[len(all)-1].ID
		// A later rating past the watermark.
		add(models.ReviewRating{RowID: rows[2].ID, Reviewer: "bob", Score: ptr(1)})

		mean := func(vs ...float64) float64 {
			var s float64
			for _, v := range vs {
				s += v
			}
			return s / float64(len(vs))
		}
		cases := []struct {
			name   string
			source models.HumanSource
			upto   int64
			want   []*float64 // per sample
			annots []int      // annotators per sample
		}{
			{"imported", models.HumansImported, 0, []*float64{ptr(2), ptr(4), nil}, []int{2, 2, 0}},
			{"browser up to the watermark", models.HumansBrowser, watermark, []*float64{ptr(4), ptr(2), nil}, []int{1, 1, 0}},
			{"browser, all", models.HumansBrowser, 0, []*float64{ptr(4), ptr(2), ptr(1)}, []int{1, 1, 1}},
			{"both", models.HumansBoth, watermark, []*float64{ptr(mean(1, 3, 4)), ptr(mean(4, 4, 2)), nil}, []int{3, 3, 0}},
		}
		for _, c := range cases {
			hs, err := db.HumanRatings(ctx, ws.ID, ds.ID, crit, c.source, c.upto)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for i, h := range hs {
				w := c.want[i]
				if (h.Score == nil) != (w == nil) || (w != nil && math.Abs(*h.Score-*w) > 1e-12) {
					t.Errorf("%s: sample %s human %v, want %v", c.name, h.ExternalID, fmtp(h.Score), fmtp(w))
				}
				if len(h.Annotators) != c.annots[i] {
					t.Errorf("%s: sample %s annotators %v, want %d", c.name, h.ExternalID, h.Annotators, c.annots[i])
				}
			}
		}

		// The run's choice: absent means imported; setting it records the
		// watermark of the ratings stored so far.
		j, err := db.EnsureSimulatedJudge(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		run := models.Run{WorkspaceID: ws.ID, ProjectID: ds.ProjectID, DatasetID: ds.ID, JudgeID: &j.ID, Name: "r", Method: models.MethodBatchEval, Status: models.RunSucceeded, CreatedAt: time.Now()}
		if err := db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindRunHumanSource(ctx, run.ID)
		if err != nil || got.Source != models.HumansImported || got.UptoRatingID != 0 {
			t.Fatalf("default source %+v, %v; want imported", got, err)
		}
		set, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "ann")
		if err != nil {
			t.Fatal(err)
		}
		got, err = db.FindRunHumanSource(ctx, run.ID)
		if err != nil || got.Source != models.HumansBoth || got.UptoRatingID != set.UptoRatingID || got.UptoRatingID <= watermark {
			t.Fatalf("stored source %+v, %v; want both up to the newest rating (> %d)", got, err, watermark)
		}
		if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, "guess", "ann"); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("unknown source: %v, want invalid", err)
		}
	})
}

func fmtp(v *float64) any {
	if v == nil {
		return "nil"
	}
	return *v
}

// TestPurgeRemovesReviews: purging a dataset from the trash removes its
// reviews, and purging a run its choice of human ratings, for real.
func TestPurgeRemovesReviews(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, ds, rows := reviewDataset(t, db)
		if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[0].ID,
			Criterion: "Coherence", Reviewer: "ann", Score: ptr(2), Lo: 1, Hi: 5}); err != nil {
			t.Fatal(err)
		}
		j, err := db.EnsureSimulatedJudge(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		run := models.Run{WorkspaceID: ws.ID, ProjectID: ds.ProjectID, DatasetID: ds.ID, JudgeID: &j.ID, Name: "r", Method: models.MethodBatchEval, Status: models.RunSucceeded, CreatedAt: time.Now()}
		if err := db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, run.ID, models.RunSucceeded, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "ann"); err != nil {
			t.Fatal(err)
		}
		entry, _, err := db.Trash(ctx, ws.ID, models.KindDataset, ds.ID, models.Actor{Label: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Purge(ctx, ws.ID, entry.ID); err != nil {
			t.Fatal(err)
		}
		var reviews, sources int64
		db.Gorm.Model(&models.ReviewRating{}).Count(&reviews)
		db.Gorm.Model(&models.RunHumanSource{}).Count(&sources)
		if reviews != 0 || sources != 0 {
			t.Errorf("after the purge: %d reviews, %d human-rating choices left", reviews, sources)
		}
	})
}
