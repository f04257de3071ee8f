package models_test

import (
	"context"
	"encoding/json"
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
	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// humanRatingsWithTexts is HumanRatings as it was before it read the
// rows' ids and ratings alone: every row whole (ListDatasetRows, its
// texts too), then the ratings' columns of the reviews and the same
// merge. The reference of TestHumanRatingsReadNoTexts and the baseline
// of BenchmarkHumanRatingsRows.
func humanRatingsWithTexts(ctx context.Context, db *models.DB, wsID, datasetID int64, crit evaluator.Criterion, source models.HumanSource, uptoID int64) ([]models.HumanRating, error) {
	if _, err := db.FindDataset(ctx, wsID, datasetID); err != nil {
		return nil, err
	}
	rows, err := db.ListDatasetRows(ctx, datasetID, 0, 0)
	if err != nil {
		return nil, err
	}
	var reviews []models.ReviewRating
	if source != models.HumansImported {
		byName, err := db.ListCriteriaRatings(ctx, wsID, datasetID, []string{crit.Name}, uptoID)
		if err != nil {
			return nil, err
		}
		excluded, err := db.ExcludedRaters(ctx, wsID)
		if err != nil {
			return nil, err
		}
		reviews, _ = models.WithoutExcluded(byName[crit.Name], excluded)
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

// importedRatings is the imported ratings of sample i: the "coh" and
// "flu" columns, two "coh" annotators, a "coh" left empty now and then, a
// column named like a criterion without a human column ("other"), and
// rows rated alike (the same stored text) and apart.
func importedRatings(i int) map[string]*float64 {
	f := func(v float64) *float64 { return &v }
	r := map[string]*float64{"flu": f(float64(i%101) / 1.7), "other": f(float64(i % 5))}
	switch i % 7 {
	case 0:
		r["coh"] = nil
	case 1, 2:
		r["coh"] = f(float64(1 + i%5))
	default:
		r["coh"], r["coh@a"], r["coh@b"] = f(float64(1+i%5)), f(float64(1+i%5)), f(float64(1+(i+1)%5))
	}
	if i%13 == 0 {
		r["coh@b"] = nil
	}
	return r
}

// TestHumanRatingsReadNoTexts: models.HumanRatings read every row of the
// dataset whole, its texts too, to keep its id and imported ratings. It
// now reads the rows' ids and ratings only, and gives every sample the
// same rating and annotators as the whole rows did, for each source,
// criterion (a human column with imported annotators, one without, one
// with explicit annotator columns, none, a name that is a rating column)
// and cut-off, on both databases; no statement of it reads a row's data.
func TestHumanRatingsReadNoTexts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		const n = 60
		ws, ds := seedRatings(t, db, n, 700)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		var ids []int64
		must(db.Gorm.Raw("SELECT id FROM dataset_rows WHERE dataset_id = ? ORDER BY position", ds.ID).Scan(&ids).Error)
		for i, id := range ids {
			raw, err := json.Marshal(importedRatings(i))
			must(err)
			text := fmt.Sprintf(`{"text":"Response %d, %s"}`, i, strings.Repeat("long text ", 20))
			must(db.Gorm.Exec("UPDATE dataset_rows SET ratings = ?, data = ? WHERE id = ?", string(raw), text, id).Error)
		}
		var mu sync.Mutex
		var stmts []string
		const hook = "test:humanratings_rows_statements"
		take := func(tx *gorm.DB) {
			if sql := tx.Statement.SQL.String(); tx.Statement.Table == "dataset_rows" || strings.Contains(sql, "dataset_rows") {
				mu.Lock()
				stmts = append(stmts, sql)
				mu.Unlock()
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
		texts := regexp.MustCompile(`(?i)SELECT \*|\bdata\b`)
		criteria := []evaluator.Criterion{
			{Name: "coh", Lo: 1, Hi: 5, HumanColumn: "coh"},
			{Name: "coh", Lo: 1, Hi: 3, HumanColumn: "coh"},
			{Name: "coh", Lo: 1, Hi: 5, HumanColumn: "coh", AnnotatorColumns: []string{"coh@b", "flu"}},
			{Name: "flu", Lo: 0, Hi: 100, HumanColumn: "flu"},
			{Name: "other", Lo: 1, Hi: 5},
			{Name: "other", Lo: 1, Hi: 5, AnnotatorColumns: []string{"coh@a"}},
			{Name: "nobody rated", Lo: 1, Hi: 5, HumanColumn: "coh"},
		}
		rated, annotated := 0, 0
		for _, crit := range criteria {
			for _, source := range []models.HumanSource{models.HumansImported, models.HumansBrowser, models.HumansBoth} {
				for _, upto := range []int64{0, middle} {
					want, err := humanRatingsWithTexts(ctx, db, ws.ID, ds.ID, crit, source, upto)
					must(err)
					mu.Lock()
					stmts = nil
					mu.Unlock()
					got, err := db.HumanRatings(ctx, ws.ID, ds.ID, crit, source, upto)
					must(err)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s %g-%g %v, %s, up to %d: HumanRatings differs from the whole rows' ratings", crit.Name, crit.Lo, crit.Hi, crit.AnnotatorColumns, source, upto)
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
						annotated += len(h.Annotators)
					}
					mu.Lock()
					if len(stmts) == 0 {
						t.Errorf("%s, %s: no statement on dataset_rows seen", crit.Name, source)
					}
					for _, s := range stmts {
						if texts.MatchString(s) {
							t.Errorf("%s, %s: HumanRatings reads the rows' texts: %s", crit.Name, source, s)
						}
					}
					mu.Unlock()
				}
			}
		}
		if rated == 0 || annotated == 0 {
			t.Fatalf("%d ratings, %d annotators' ratings: the comparison compares nothing", rated, annotated)
		}
	})
}

// seedTextsAndRatings imports a dataset of n samples, each with a text of
// textLen bytes and importedRatings, and adds n browser reviews of "coh"
// on the 1-5 scale by three reviewers, for BenchmarkHumanRatingsRows.
func seedTextsAndRatings(tb testing.TB, db *models.DB, n, textLen int) (models.Workspace, models.Dataset) {
	tb.Helper()
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "p"}
	if err := db.CreateProject(ctx, &p); err != nil {
		tb.Fatal(err)
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text", "coh", "flu", "other"},
		Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"coh", "flu", "other"}}
	filler := strings.Repeat("A turn of a long dialogue. ", textLen/27+1)[:textLen]
	if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
		for i := range n {
			if err := put(models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%d", i),
				Data: map[string]string{"text": fmt.Sprintf("%d %s", i, filler)}, Ratings: importedRatings(i)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	var first int64
	if err := db.Gorm.Raw("SELECT MIN(id) FROM dataset_rows WHERE dataset_id = ?", ds.ID).Scan(&first).Error; err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC()
	batch := make([]models.ReviewRating, 0, 1000)
	for i := range n {
		score := float64(1 + i%5)
		batch = append(batch, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: first + int64((i*7)%n), Criterion: "coh", HumanColumn: "coh",
			Lo: 1, Hi: 5, Score: &score, Reviewer: fmt.Sprintf("reviewer %d", i%3), Tags: []string{}, CreatedAt: now.Add(time.Duration(i) * time.Millisecond)})
		if len(batch) == cap(batch) || i == n-1 {
			if err := db.Gorm.CreateInBatches(&batch, 200).Error; err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if db.Dialect == models.Postgres {
		if err := db.Gorm.Exec("ANALYZE").Error; err != nil {
			tb.Fatal(err)
		}
	}
	return ws, ds
}

// BenchmarkHumanRatingsRows times HumanRatings of one criterion from
// both sources the old way (humanRatingsWithTexts: every row whole) and
// the new (the rows' ids and ratings), on a dataset of 100,000 samples
// with texts of 1,000 bytes, imported ratings and 100,000 browser
// reviews, on SQLite and, with TEST_DATABASE_URL, PostgreSQL: the median
// of five reads each, alternated, and their ratio, in wall and this
// process's CPU time (SQLite's work, not PostgreSQL's server). Run with
// -benchtime=1x.
func BenchmarkHumanRatingsRows(b *testing.B) {
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	crit := evaluator.Criterion{Name: "coh", Lo: 1, Hi: 5, HumanColumn: "coh"}
	for _, d := range dialects {
		b.Run(string(d), func(b *testing.B) {
			for b.Loop() {
				const n = 100000
				db := dbtest.Open(b, d)
				ctx := context.Background()
				ws, ds := seedTextsAndRatings(b, db, n, 1000)
				type way struct {
					name string
					read func() ([]models.HumanRating, error)
					took []time.Duration
					cpu  []time.Duration
				}
				ways := []*way{
					{name: "whole rows", read: func() ([]models.HumanRating, error) {
						return humanRatingsWithTexts(ctx, db, ws.ID, ds.ID, crit, models.HumansBoth, 0)
					}},
					{name: "ids and ratings", read: func() ([]models.HumanRating, error) {
						return db.HumanRatings(ctx, ws.ID, ds.ID, crit, models.HumansBoth, 0)
					}},
				}
				for range 5 {
					for _, w := range ways {
						start, cpu := time.Now(), proccpu.Now(b).CPU
						hs, err := w.read()
						if err != nil {
							b.Fatal(err)
						}
						if len(hs) != n {
							b.Fatalf("%d samples, want %d", len(hs), n)
						}
						w.took = append(w.took, time.Since(start))
						w.cpu = append(w.cpu, proccpu.Now(b).CPU-cpu)
					}
				}
				med, cpu := make([]time.Duration, len(ways)), make([]time.Duration, len(ways))
				for i, w := range ways {
					slices.Sort(w.took)
					slices.Sort(w.cpu)
					med[i], cpu[i] = w.took[len(w.took)/2], w.cpu[len(w.cpu)/2]
				}
				b.Logf("%s, %d samples and reviews: whole rows %v (CPU %v), ids and ratings %v (CPU %v), ratio %.2fx (CPU %.2fx)", d, n,
					med[0].Round(time.Millisecond), cpu[0].Round(time.Millisecond), med[1].Round(time.Millisecond), cpu[1].Round(time.Millisecond),
					float64(med[0])/float64(med[1]), float64(cpu[0])/float64(cpu[1]))
				b.ReportMetric(float64(med[0])/float64(med[1]), "before/after")
				b.ReportMetric(float64(med[1].Milliseconds()), "ms-after")
			}
		})
	}
}
