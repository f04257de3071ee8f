package models_test

import (
	"context"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunFigureListsAtTheirSize: a run's scores and batch layout, as its
// figures read them, come in order, each list in an array of its size
// (grown by appending, a million-sample run's two million scores took up
// to twice their size and kept the unused part while held), and only the
// run's own.
func TestRunFigureListsAtTheirSize(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 6)
		if err != nil || len(rows) < 6 {
			t.Fatalf("rows: %d, %v", len(rows), err)
		}
		var runs []models.Run
		for _, name := range []string{"mine", "other"} {
			r := w.newRun(t, name)
			runs = append(runs, r)
			for ci := range 2 {
				for round := range 2 {
					groups := [][]int64{{rows[0].ID, rows[1].ID}, {rows[2].ID, rows[3].ID}, {rows[4].ID, rows[5].ID}}
					bs, err := db.CreateRoundBatches(ctx, r.ID, ci, round, groups)
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range bs {
						res := models.BatchResult{Batch: b}
						res.Batch.Status = models.BatchDone
						for k, id := range b.RowIDs {
							v := float64(k + round + 1)
							sc := models.RunScore{RunID: r.ID, BatchID: b.ID, CriterionIndex: ci, Round: round, RowID: id, Label: k + 1, Score: &v, Analysis: "why"}
							if ci == 1 && round == 1 && k == 1 {
								sc.Score = nil // unreadable
							}
							res.Scores = append(res.Scores, sc)
						}
						if err := db.SaveBatchResult(ctx, res); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
		scores, err := db.ListScoreValues(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(scores) != 24 || cap(scores) != len(scores) {
			t.Errorf("%d scores in an array of %d, want 24 in 24", len(scores), cap(scores))
		}
		whole, err := db.ListScores(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(whole) != len(scores) {
			t.Fatalf("%d scores, %d whole", len(scores), len(whole))
		}
		for i, s := range scores {
			w := whole[i]
			if s.RunID != runs[0].ID || s.Analysis != "" || w.Analysis != "why" {
				t.Fatalf("score %d: %+v", i, s)
			}
			// Every value but the analysis as the whole score has it,
			// an unreadable score nil.
			w.Analysis = ""
			if (s.Score == nil) != (w.Score == nil) || (s.Score != nil && *s.Score != *w.Score) {
				t.Fatalf("score %d: %v, want %v", i, s.Score, w.Score)
			}
			s.Score, w.Score = nil, nil
			if s != w {
				t.Fatalf("score %d: %+v, want %+v", i, s, w)
			}
			if i > 0 {
				p := scores[i-1]
				if slices.Compare([]int64{int64(p.CriterionIndex), int64(p.Round), p.RowID}, []int64{int64(s.CriterionIndex), int64(s.Round), s.RowID}) > 0 {
					t.Fatalf("scores %d and %d out of order: %+v, %+v", i-1, i, p, s)
				}
			}
		}
		// The oracle of the per-criterion reads below: every score of
		// the run as the whole read has it (ListScores), reduced to what
		// the figures read, and every batch (ListBatches), in order.
		figs := make([]scoreFigure, len(whole))
		unreadable := 0
		for i, w := range whole {
			figs[i] = figureOf(w)
			if !figs[i].Readable {
				unreadable++
			}
		}
		if unreadable != 3 {
			t.Errorf("%d unreadable scores, want the 3 stored", unreadable)
		}
		layout, err := db.ListBatches(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(layout) != 12 {
			t.Errorf("%d batches, want 12", len(layout))
		}
		for i, b := range layout {
			if b.RunID != runs[0].ID || len(b.RowIDs) != 2 || b.Status != models.BatchDone {
				t.Fatalf("batch %d: %+v", i, b)
			}
			if want := [3]int{i / 6, i / 3 % 2, i % 3}; [3]int{b.CriterionIndex, b.Round, b.BatchIndex} != want {
				t.Fatalf("batch %d is criterion %d, round %d, index %d; want %v", i, b.CriterionIndex, b.Round, b.BatchIndex, want)
			}
		}
		// One criterion at a time (livemem45): its scores as values, one
		// span a round, the batch kept of unreadable ones only; its
		// batches' layout with the rows of all in one array. Together
		// the criteria's are the run's, one for one, in the same order.
		var gotScores []scoreFigure
		var gotBatches []models.BatchFigure
		for ci := range 3 { // criterion 2 has none
			v, err := db.ListCriterionScoreValues(ctx, runs[0].ID, ci)
			if err != nil {
				t.Fatal(err)
			}
			if cap(v.Scores) != len(v.Scores) {
				t.Errorf("criterion %d: %d scores in an array of %d", ci, len(v.Scores), cap(v.Scores))
			}
			end := 0
			for _, sp := range v.Spans {
				if sp.Start != end || sp.End <= sp.Start || int(sp.Criterion) != ci {
					t.Fatalf("criterion %d: span %+v after %d", ci, sp, end)
				}
				end = sp.End
				for i := sp.Start; i < sp.End; i++ {
					s := v.Scores[i]
					f := scoreFigure{RowID: s.RowID, Score: s.Score, CriterionIndex: sp.Criterion, Round: sp.Round, Label: s.Label, Readable: s.Readable}
					b, kept := v.UnreadableBatch[i]
					if kept == s.Readable {
						t.Fatalf("criterion %d, score %d: readable %v, batch kept %v", ci, i, s.Readable, kept)
					}
					if !kept {
						b = figs[len(gotScores)].BatchID // only unreadable scores keep theirs
					}
					f.BatchID = b
					gotScores = append(gotScores, f)
				}
			}
			if end != len(v.Scores) || len(v.Spans) != map[int]int{0: 2, 1: 2, 2: 0}[ci] {
				t.Fatalf("criterion %d: spans %+v over %d scores", ci, v.Spans, len(v.Scores))
			}
			bs, err := db.ListCriterionBatchFigures(ctx, runs[0].ID, ci, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range bs {
				// Slices of one array that cannot grow into the next
				// batch's rows.
				if len(b.RowIDs) != cap(b.RowIDs) {
					t.Fatalf("criterion %d: batch %d's rows can grow into the next's", ci, i)
				}
			}
			gotBatches = append(gotBatches, bs...)
		}
		if !slices.Equal(gotScores, figs) {
			t.Errorf("the criteria's scores are\n%+v\nwant\n%+v", gotScores, figs)
		}
		want := models.BatchFiguresOf(layout)
		if len(gotBatches) != len(want) {
			t.Fatalf("%d batch figures, want %d", len(gotBatches), len(want))
		}
		for i := range want {
			g, w := gotBatches[i], want[i]
			if g.ID != w.ID || g.Status != w.Status || g.CriterionIndex != w.CriterionIndex || g.Round != w.Round || !slices.Equal(g.RowIDs, w.RowIDs) {
				t.Errorf("batch figure %d: %+v, want %+v", i, g, w)
			}
		}
	})
}

// scoreFigure is what a run's figures read of one score, a value beside
// whether it was readable: the per-criterion reads
// (models.ListCriterionScoreValues) are checked against the whole run's
// scores reduced to it (figureOf).
type scoreFigure struct {
	RowID, BatchID        int64
	Score                 float64 // meaningful when Readable
	CriterionIndex, Round int32
	Label                 int32
	Readable              bool
}

// figureOf is what the figures read of s.
func figureOf(s models.RunScore) scoreFigure {
	f := scoreFigure{RowID: s.RowID, BatchID: s.BatchID, CriterionIndex: int32(s.CriterionIndex), Round: int32(s.Round), Label: int32(s.Label)}
	if s.Score != nil {
		f.Score, f.Readable = *s.Score, true
	}
	return f
}
