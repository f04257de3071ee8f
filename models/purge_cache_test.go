package models_test

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPurgeDeletesTheRunsCachedAnswers: deleting a run for good deletes
// the judge's answers it paid for from the answer cache (an answer quotes
// or paraphrases the samples it judged), and only those: another run's
// answers stay, and so do answers stored with no run (cached before
// migration 00044). A dataset's purge takes its runs' answers with them.
// Before, every cached answer outlived the runs and dataset it was about.
func TestPurgeDeletesTheRunsCachedAnswers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		if len(w.runs) < 2 {
			t.Fatalf("the world has %d runs, want 2", len(w.runs))
		}
		cache := db.ResponseCache(w.ws.ID)
		save := func(c *models.ResponseCache, hash, text string) {
			t.Helper()
			if err := c.SaveAnswer(ctx, hash, 0, []byte(text)); err != nil {
				t.Fatal(err)
			}
		}
		save(cache.ForRun(w.runs[0].ID), "first", `{"analysis":"sample 1 says the hotel was noisy"}`)
		save(cache.ForRun(w.runs[0].ID), "first-again", `{"analysis":"sample 2"}`)
		save(cache.ForRun(w.runs[1].ID), "second", `{"analysis":"sample 3"}`)
		save(cache, "older", `{"analysis":"cached before answers had a run"}`)
		stored := func(hash string) bool {
			t.Helper()
			_, ok, err := cache.LoadAnswer(ctx, hash, 0)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}

		e, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[0].ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if !stored("first") {
			t.Fatal("a run in the trash lost its cached answers: it can still be restored")
		}
		_, n, err := db.Purge(ctx, w.ws.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n.CachedAnswers != 2 {
			t.Errorf("purge counted %d cached answers, want 2", n.CachedAnswers)
		}
		for hash, want := range map[string]bool{"first": false, "first-again": false, "second": true, "older": true} {
			if got := stored(hash); got != want {
				t.Errorf("after the run's purge, answer %q stored = %v, want %v", hash, got, want)
			}
		}

		e, _, err = db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Purge(ctx, w.ws.ID, e.ID); err != nil {
			t.Fatal(err)
		}
		if stored("second") {
			t.Error("the dataset's purge left its run's cached answer")
		}
		if !stored("older") {
			t.Error("an answer with no run was deleted by a purge that cannot know whose it was")
		}
	})
}
