package models_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// humanRatingsWhole is HumanRatings as it was: the criterion's whole
// reviews through GORM (ListReviewRatings), then the same merge. The
// reference of TestHumanRatingsReadTheRatingsColumns.
func humanRatingsWhole(ctx context.Context, db *models.DB, wsID, datasetID int64, crit evaluator.Criterion, source models.HumanSource, uptoID int64) ([]models.HumanRating, error) {
	if _, err := db.FindDataset(ctx, wsID, datasetID); err != nil {
		return nil, err
	}
	rows, err := db.ListDatasetRows(ctx, datasetID, 0, 0)
	if err != nil {
		return nil, err
	}
	var reviews []models.ReviewRating
	if source != models.HumansImported {
		if reviews, err = db.ListReviewRatings(ctx, wsID, datasetID, crit.Name, uptoID); err != nil {
			return nil, err
		}
		reviews = models.OnScale(reviews, crit.HumanScale())
	}
	rows, crit = models.MergeHumanRatings(rows, crit, source, reviews)
	cols := models.AnnotatorColumns(crit.HumanColumn, crit.AnnotatorColumns, rows)
	out := make([]models.HumanRating, len(rows))
	for i, r := range rows {
		h := models.HumanRating{RowID: r.ID, ExternalID: r.ExternalID, Annotators: map[string]float64{}}
		if crit.HumanColumn != "" {
			if v := r.Ratings[crit.HumanColumn]; v != nil && !math.IsNaN(*v) {
				s := *v
				h.Score = &s
			}
		}
		for _, c := range cols {
			if v := r.Ratings[c]; v != nil && !math.IsNaN(*v) {
				h.Annotators[c] = *v
			}
		}
		out[i] = h
	}
	return out, nil
}

// TestHumanRatingsReadTheRatingsColumns: models.HumanRatings read the
// criterion's whole reviews (reason, comment, tags, times...) through
// GORM's struct scan to merge their ratings. It now reads the ratings'
// columns only (ListCriteriaRatings), and gives every sample the same
// rating and annotators as the whole reviews did, on every field: for each
// criterion and scale of seedRatings (typed names, an account whose email
// changed, one deleted, ratings left empty, ratings on another scale),
// each source and a cut-off, on both databases.
func TestHumanRatingsReadTheRatingsColumns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, ds := seedRatings(t, db, 60, 700)
		var mu sync.Mutex
		var stmts []string
		const hook = "test:humanratings_statements"
		take := func(tx *gorm.DB) {
			if sql := tx.Statement.SQL.String(); tx.Statement.Table == "review_ratings" || strings.Contains(sql, "review_ratings") {
				mu.Lock()
				stmts = append(stmts, sql)
				mu.Unlock()
			}
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(db.Gorm.Callback().Query().After("gorm:query").Register(hook, take))
		must(db.Gorm.Callback().Row().After("gorm:row").Register(hook, take))
		t.Cleanup(func() {
			_ = db.Gorm.Callback().Query().Remove(hook)
			_ = db.Gorm.Callback().Row().Remove(hook)
		})
		var middle int64
		must(db.Gorm.Raw("SELECT id FROM review_ratings WHERE dataset_id = ? ORDER BY id LIMIT 1 OFFSET 350", ds.ID).Scan(&middle).Error)
		whole := regexp.MustCompile(`(?i)SELECT \*|\b(reason|comment|tags|agree|created_at|run_id)\b`)
		criteria := []evaluator.Criterion{
			{Name: "coh", Lo: 1, Hi: 5, HumanColumn: "coh"},
			{Name: "coh", Lo: 1, Hi: 3, HumanColumn: "coh"},
			{Name: "flu", Lo: 0, Hi: 100, HumanColumn: "flu"},
			{Name: "other", Lo: 1, Hi: 5},
			{Name: "nobody rated", Lo: 1, Hi: 5, HumanColumn: "coh"},
		}
		rated := 0
		for _, crit := range criteria {
			for _, source := range []models.HumanSource{models.HumansImported, models.HumansBrowser, models.HumansBoth} {
				for _, upto := range []int64{0, middle} {
					want, err := humanRatingsWhole(ctx, db, ws.ID, ds.ID, crit, source, upto)
					must(err)
					mu.Lock()
					stmts = nil
					mu.Unlock()
					got, err := db.HumanRatings(ctx, ws.ID, ds.ID, crit, source, upto)
					must(err)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s %g-%g, %s, up to %d: HumanRatings differs from the whole reviews' ratings", crit.Name, crit.Lo, crit.Hi, source, upto)
						for i := range min(len(got), len(want)) {
							if !reflect.DeepEqual(got[i], want[i]) {
								t.Errorf("first difference, sample %d: %+v, want %+v", i, got[i], want[i])
								break
							}
						}
					}
					for _, h := range got {
						if h.Score != nil {
							rated++
						}
					}
					mu.Lock()
					if source != models.HumansImported && len(stmts) == 0 {
						t.Errorf("%s, %s: no statement on review_ratings seen", crit.Name, source)
					}
					for _, s := range stmts {
						if whole.MatchString(s) {
							t.Errorf("%s, %s: HumanRatings reads whole reviews: %s", crit.Name, source, s)
						}
					}
					mu.Unlock()
				}
			}
		}
		if rated == 0 {
			t.Fatal("no sample has a human rating: the comparison compares nothing")
		}
	})
}

// BenchmarkHumanRatingsRead times HumanRatings of one criterion from the
// browser's ratings the old way (humanRatingsWhole: whole reviews through
// GORM) and the new (the ratings' columns), on seedRatings' datasets of
// 10,000 and 100,000 reviews (half as many samples), on SQLite and, with
// TEST_DATABASE_URL, PostgreSQL: the median of five reads each, their
// ratio, and each way's growth from the small to the large dataset. Run
// with -benchtime=1x.
func BenchmarkHumanRatingsRead(b *testing.B) {
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	crit := evaluator.Criterion{Name: "coh", Lo: 1, Hi: 5, HumanColumn: "coh"}
	for _, d := range dialects {
		b.Run(string(d), func(b *testing.B) {
			for b.Loop() {
				var base [2]time.Duration
				for _, n := range []int{10000, 100000} {
					db := dbtest.Open(b, d)
					ctx := context.Background()
					ws, ds := seedRatings(b, db, n/2, n)
					median := func(read func(context.Context, *models.DB, int64, int64, evaluator.Criterion, models.HumanSource, int64) ([]models.HumanRating, error)) time.Duration {
						var took []time.Duration
						for range 5 {
							start := time.Now()
							if _, err := read(ctx, db, ws.ID, ds.ID, crit, models.HumansBrowser, 0); err != nil {
								b.Fatal(err)
							}
							took = append(took, time.Since(start))
						}
						slices.Sort(took)
						return took[2]
					}
					before := median(humanRatingsWhole)
					after := median(func(ctx context.Context, db *models.DB, ws, ds int64, c evaluator.Criterion, s models.HumanSource, upto int64) ([]models.HumanRating, error) {
						return db.HumanRatings(ctx, ws, ds, c, s, upto)
					})
					if base[0] == 0 {
						base = [2]time.Duration{before, after}
					}
					b.Logf("%s, %d reviews: whole reviews %v (x%.2f the 10,000's), ratings' columns %v (x%.2f), ratio %.2fx", d, n,
						before.Round(time.Millisecond), float64(before)/float64(base[0]), after.Round(time.Millisecond), float64(after)/float64(base[1]),
						float64(before)/float64(after))
					b.ReportMetric(float64(before)/float64(after), fmt.Sprintf("before/after-%d", n))
				}
			}
		})
	}
}
