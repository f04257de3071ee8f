package report

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPagesReadTheCurrentRatingsAsBefore: the reviews a request reads and
// passes to a run's report (ReadBrowserReviews: the run page and live
// figures; ReadChosenReviews: the review queue, the sample page, the
// alignment) are each reviewer's current review of each sample on the
// criterion's scale, now and as of the run's cut-off, and no longer every
// review of the dataset (readBrowserReviews, the read before reviews47);
// and everything read from them is the same: per criterion, the current
// ratings now (what the run page counts, and those the report does not use
// yet) and as of the cut-off, counted and excluded; what the report says
// it used; the stored summary's key; and every figure of the report built
// (BuildWith) and of the live figures (BuildFigures) with them. On the
// history of TestReportReadsTheCurrentRatingsAsBefore (overwritten,
// withdrawn and off-scale ratings, deleted rows, an excluded account, an
// email changed), with ratings after the cut-off, under the imported,
// browser and both sources.
func TestPagesReadTheCurrentRatingsAsBefore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 60)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, db, wsID, run.DatasetID, rows, run.RubricSnapshot.Criteria, 47, 900)
		count := func(pre *BrowserReviews) (n int) {
			if pre == nil {
				return 0
			}
			for _, m := range []map[string][]models.ReviewRating{pre.ByName, pre.Excluded} {
				for _, rs := range m {
					n += len(rs)
				}
			}
			return n
		}
		var imported *Report // the report under the imported ratings: the browser ones change it
		for _, source := range []models.HumanSource{models.HumansImported, models.HumansBrowser, models.HumansBoth} {
			choice, err := db.FindRunHumanSource(ctx, runID)
			must(t, err)
			if source != models.HumansImported {
				choice, err = db.SetRunHumanSource(ctx, wsID, runID, source, "tester")
				must(t, err)
			}
			hist.Review(80) // after the cut-off: counted by the page as not used yet
			old, err := readBrowserReviews(ctx, db, run, choice.UptoRatingID, 0)
			must(t, err)
			var oldChosen *BrowserReviews
			if source != models.HumansImported {
				oldChosen = old
			}
			cur, err := ReadBrowserReviews(ctx, db, run)
			must(t, err)
			chosen, err := ReadChosenReviews(ctx, db, run)
			must(t, err)
			if (chosen == nil) != (oldChosen == nil) {
				t.Fatalf("%s: ReadChosenReviews read %v, the read before %v", source, chosen != nil, oldChosen != nil)
			}
			if count(cur) >= count(old) || (chosen != nil && count(chosen) > count(cur)) {
				t.Fatalf("%s: read %d (now and at the cut-off) and %d (at the cut-off) reviews, every review is %d", source, count(cur), count(chosen), count(old))
			}
			// What a page reads of them: per criterion, the current
			// ratings now and as of the cut-off, kept and excluded.
			for i, crit := range run.RubricSnapshot.Criteria {
				if old.Scales[i] == nil || cur.Scales[i] == nil || *old.Scales[i] != *cur.Scales[i] {
					t.Fatalf("%s, %s: scale %v, before %v", source, crit.Name, cur.Scales[i], old.Scales[i])
				}
				for _, m := range []struct {
					what     string
					old, cur map[string][]models.ReviewRating
				}{{"kept", old.ByName, cur.ByName}, {"excluded", old.Excluded, cur.Excluded}} {
					on := func(rs []models.ReviewRating, upto int64) []models.ReviewRating {
						if upto > 0 {
							rs = upTo(rs, upto)
						}
						return models.CurrentReviews(models.OnScale(rs, *cur.Scales[i]))
					}
					if a, b := on(m.old[crit.Name], 0), on(m.cur[crit.Name], 0); !reflect.DeepEqual(a, b) || (m.what == "kept" && len(a) < 20) {
						t.Errorf("%s, %s, %s: %d current reviews now, every review gives %d", source, crit.Name, m.what, len(b), len(a))
					}
					if choice.UptoRatingID > 0 {
						if a, b := on(m.old[crit.Name], choice.UptoRatingID), on(m.cur[crit.Name], choice.UptoRatingID); !reflect.DeepEqual(a, b) || len(a) == len(on(m.old[crit.Name], 0)) && m.what == "kept" {
							t.Errorf("%s, %s, %s: %d current reviews at the cut-off, every review gives %d (and %d now)", source, crit.Name, m.what, len(b), len(a), len(on(m.old[crit.Name], 0)))
						}
					}
				}
			}
			useOld, revOld, err := reviewsOfChoice(ctx, db, wsID, run, choice, old)
			must(t, err)
			keyOld, err := usedRatingsKey(ctx, db, run, choice, old)
			must(t, err)
			repOld, err := BuildWith(ctx, db, wsID, runID, Options{Reviews: oldChosen})
			must(t, err)
			figOld, err := BuildFigures(ctx, db, wsID, runID, Options{Reviews: old})
			must(t, err)
			for _, pre := range []struct {
				name string
				pre  *BrowserReviews
			}{{"ReadBrowserReviews", cur}, {"ReadChosenReviews", chosen}} {
				if pre.pre == nil {
					continue
				}
				use, rev, err := reviewsOfChoice(ctx, db, wsID, run, choice, pre.pre)
				must(t, err)
				if !reflect.DeepEqual(use, useOld) || !reflect.DeepEqual(rev, revOld) {
					t.Errorf("%s, %s: the report says it used\n%+v\nwhere every review gave\n%+v", source, pre.name, use, useOld)
				}
				key, err := usedRatingsKey(ctx, db, run, choice, pre.pre)
				must(t, err)
				if key != keyOld || (source != models.HumansImported && key == "") {
					t.Errorf("%s, %s: summary key %q, every review gave %q", source, pre.name, key, keyOld)
				}
				// Kept with the reviews for the request's next ask
				// (BrowserReviews.keys): asked again, and under the other
				// source at the same cut-off, it is what a fresh read gives.
				for _, other := range []models.HumanSource{source, models.HumansBrowser, models.HumansBoth} {
					c := choice
					c.Source = other
					got, err := usedRatingsKey(ctx, db, run, c, pre.pre)
					must(t, err)
					want, err := usedRatingsKey(ctx, db, run, c, nil)
					must(t, err)
					if got != want {
						t.Errorf("%s, %s, asked as %s: summary key %q, read afresh %q", source, pre.name, other, got, want)
					}
				}
			}
			for _, pre := range []*BrowserReviews{cur, chosen} {
				rep, err := BuildWith(ctx, db, wsID, runID, Options{Reviews: pre})
				must(t, err)
				if !sameValue(rep, repOld) {
					t.Errorf("%s: the report's figures differ from those built with every review", source)
				}
				fig, err := BuildFigures(ctx, db, wsID, runID, Options{Reviews: pre})
				must(t, err)
				if !sameValue(fig, figOld) {
					t.Errorf("%s: the live figures differ from those built with every review", source)
				}
			}
			if imported == nil {
				imported = repOld
			} else if sameValue(repOld, imported) {
				t.Fatalf("%s: the report is the imported ratings' one: the comparison tells nothing", source)
			}
			if source != models.HumansImported && useOld.BrowserRatings < 40 {
				t.Fatalf("%s: %d browser ratings used: the history tests little", source, useOld.BrowserRatings)
			}
		}
	})
}

// sameValue is reflect.DeepEqual but for a NaN, which equals a NaN here (a
// missing rating or figure is a NaN in a report, and DeepEqual finds two
// reports with one unequal).
func sameValue(a, b any) bool { return sameReflected(reflect.ValueOf(a), reflect.ValueOf(b)) }

func sameReflected(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameReflected(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameReflected(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() {
			return false
		}
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameReflected(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !sameReflected(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() == b.IsNil()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	}
	return false
}
