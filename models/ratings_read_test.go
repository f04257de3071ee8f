package models_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// wholeReviews reads every review of the dataset's named criteria as
// ListCriteriaReviews did before ListCriteriaRatings: whole reviews through
// GORM's struct scan, oldest first, each account's reviews named by its
// current email, by criterion name. The reference of the tests and the
// benchmark's "before".
func wholeReviews(ctx context.Context, db *models.DB, wsID, datasetID int64, criteria []string, uptoID int64) (map[string][]models.ReviewRating, error) {
	out := map[string][]models.ReviewRating{}
	if len(criteria) == 0 {
		return out, nil
	}
	q := db.Reader(ctx).Where("workspace_id = ? AND dataset_id = ? AND criterion IN ?", wsID, datasetID, criteria)
	if uptoID > 0 {
		q = q.Where("id <= ?", uptoID)
	}
	var rs []models.ReviewRating
	if err := q.Order("id").Find(&rs).Error; err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rs {
		if r.UserID != nil {
			ids = append(ids, *r.UserID)
		}
	}
	if len(ids) > 0 {
		var users []models.User
		if err := db.Reader(ctx).Select("id", "email", "name").Where("id IN ?", ids).Find(&users).Error; err != nil {
			return nil, err
		}
		byID := map[int64]models.User{}
		for _, u := range users {
			byID[u.ID] = u
		}
		for i := range rs {
			if rs[i].UserID != nil {
				if u, ok := byID[*rs[i].UserID]; ok {
					rs[i].Reviewer = u.Email
					if n := strings.TrimSpace(u.Name); n != u.Email {
						rs[i].ReviewerName = n // the name reports key the account by
						if n != "" {
							rs[i].NameRank = 1 // no two accounts of the seed share a name
						}
					}
				}
			}
		}
	}
	for _, r := range rs {
		out[r.Criterion] = append(out[r.Criterion], r)
	}
	return out, nil
}

// ratingFields is what ListCriteriaRatings reads of a review.
func ratingFields(r models.ReviewRating) models.ReviewRating {
	return models.ReviewRating{ID: r.ID, WorkspaceID: r.WorkspaceID, DatasetID: r.DatasetID, RowID: r.RowID, Criterion: r.Criterion,
		HumanColumn: r.HumanColumn, Reviewer: r.Reviewer, ReviewerName: r.ReviewerName, NameRank: r.NameRank, UserID: r.UserID, Score: r.Score, Lo: r.Lo, Hi: r.Hi}
}

// seedRatings stores a dataset of rows samples and reviews reviews of them
// spread over the criteria "coh" (scale 1 to 5, some given on 1 to 3),
// "flu" (0 to 100) and "other": typed names and two accounts (one whose
// email changed since, one deleted since), ratings fractional or left
// empty, with agreements, reasons, comments and tags. It returns the
// workspace and dataset.
func seedRatings(tb testing.TB, db *models.DB, rows, reviews int) (models.Workspace, models.Dataset) {
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
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text", "coh", "flu"},
		Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"coh", "flu"}}
	if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
		for i := range rows {
			if err := put(models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%d", i), Data: map[string]string{"text": fmt.Sprintf("Response %d", i)}}); err != nil {
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
	var users []models.User
	for _, email := range []string{"ann@example.com", "bo@example.com"} {
		u := models.User{Email: email, Name: email, PasswordHash: "x", CreatedAt: time.Now().UTC()}
		if err := db.Gorm.Create(&u).Error; err != nil {
			tb.Fatal(err)
		}
		users = append(users, u)
	}
	names := []string{"Zoë Ångström", "Lee, Kim", "reviewer 3"}
	crits := []struct {
		name, column string
		lo, hi       float64
	}{{"coh", "coh", 1, 5}, {"flu", "flu", 0, 100}, {"coh", "coh", 1, 3}, {"other", "", 1, 5}}
	now := time.Now().UTC()
	batch := make([]models.ReviewRating, 0, 1000)
	for i := range reviews {
		c := crits[i%len(crits)]
		r := models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: first + int64((i*7)%rows), Criterion: c.name, HumanColumn: c.column,
			Lo: c.lo, Hi: c.hi, Tags: []string{}, CreatedAt: now.Add(time.Duration(i) * time.Millisecond)}
		switch k := i % 5; {
		case k < 2:
			u := users[k]
			r.UserID, r.Reviewer = &u.ID, u.Name+" <"+u.Email+">"
		default:
			r.Reviewer = names[i%len(names)]
		}
		if i%11 != 0 {
			x := c.lo + math.Mod(float64(i)*0.37, c.hi-c.lo)
			r.Score = &x
		}
		if i%3 == 0 {
			agree := i%2 == 0
			r.Agree, r.Reason = &agree, "Because of sample "+strconv.Itoa(i)
		}
		if i%4 == 0 {
			r.Comment, r.Tags = "A comment, with <markup> & \"quotes\"", []string{"tone", "length"}
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == reviews-1 {
			if err := db.Gorm.CreateInBatches(&batch, 200).Error; err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// Ann's email changes; Bo's account is deleted (his reviews keep the
	// name stored with them, their user id cleared).
	if err := db.Gorm.Exec("UPDATE users SET email = ? WHERE id = ?", "ann.new@example.com", users[0].ID).Error; err != nil {
		tb.Fatal(err)
	}
	if err := db.Gorm.Exec("DELETE FROM users WHERE id = ?", users[1].ID).Error; err != nil {
		tb.Fatal(err)
	}
	return ws, ds
}

// TestCriteriaRatingsReadAsWholeReviews: the ratings ListCriteriaRatings
// reads are the whole reviews' (as ListCriteriaReviews read them through
// GORM) on every field it sets, in the same order, under every choice of
// criteria and cut-off; and the human rating each sample gets from them
// (the mean of its reviewers' current ratings on the criterion's scale)
// is the same number.
func TestCriteriaRatingsReadAsWholeReviews(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, ds := seedRatings(t, db, 40, 600)
		var mid int64
		if err := db.Gorm.Raw("SELECT id FROM review_ratings ORDER BY id LIMIT 1 OFFSET 299").Scan(&mid).Error; err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name     string
			criteria []string
			upto     int64
		}{
			{"every criterion", []string{"coh", "flu", "other"}, 0},
			{"two criteria", []string{"coh", "flu"}, 0},
			{"up to a cut-off", []string{"coh", "flu"}, mid},
			{"a criterion nobody rated", []string{"nobody"}, 0},
			{"no criterion", nil, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want, err := wholeReviews(ctx, db, ws.ID, ds.ID, tc.criteria, tc.upto)
				if err != nil {
					t.Fatal(err)
				}
				got, err := db.ListCriteriaRatings(ctx, ws.ID, ds.ID, tc.criteria, tc.upto)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%d criteria read, want %d", len(got), len(want))
				}
				for name, ws := range want {
					gs := got[name]
					if len(gs) != len(ws) {
						t.Fatalf("%s: %d ratings read, want %d", name, len(gs), len(ws))
					}
					for i := range ws {
						if w, g := ratingFields(ws[i]), gs[i]; !reflect.DeepEqual(w, g) {
							t.Fatalf("%s, review %d:\n got %+v\nwant %+v", name, i, g, w)
						}
					}
					for _, sc := range []evaluator.Scale{{Lo: 1, Hi: 5}, {Lo: 0, Hi: 100}} {
						if w, g := sampleMeans(ws, sc), sampleMeans(gs, sc); !reflect.DeepEqual(w, g) {
							t.Errorf("%s on %v: the samples' human ratings differ:\n got %v\nwant %v", name, sc, g, w)
						}
					}
				}
			})
		}
		// The seeded set has what the comparison is about.
		all, err := db.ListCriteriaRatings(ctx, ws.ID, ds.ID, []string{"coh"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range all["coh"] {
			seen[r.Reviewer] = true
			if r.Score == nil {
				seen["no score"] = true
			}
			if r.UserID != nil {
				seen["account"] = true
			}
		}
		for _, w := range []string{"ann.new@example.com", "bo@example.com <bo@example.com>", "Zoë Ångström", "no score", "account"} {
			if !seen[w] {
				t.Errorf("the seeded ratings lack %q: %v", w, seen)
			}
		}
	})
}

// sampleMeans is each sample's mean of its reviewers' current ratings on
// scale, as a report reads them.
func sampleMeans(rs []models.ReviewRating, scale evaluator.Scale) map[int64]float64 {
	sum, n := map[int64]float64{}, map[int64]int{}
	for _, r := range models.CurrentReviews(models.OnScale(rs, scale)) {
		if r.Score != nil {
			sum[r.RowID] += *r.Score
			n[r.RowID]++
		}
	}
	for k := range sum {
		sum[k] /= float64(n[k])
	}
	return sum
}

// BenchmarkCriteriaRatingsRead reads every browser rating of a dataset's
// two criteria, MODELS_BENCH_RATINGS reviews (100,000 by default, on
// 50,000 samples), as a report, a run's page and an alignment's accept do:
// whole reviews through GORM's struct scan (ListCriteriaReviews, before)
// and their ratings' columns scanned by hand (ListCriteriaRatings, after),
// on SQLite and, with TEST_DATABASE_URL, PostgreSQL. The ratio is before
// over after, in the same process.
func BenchmarkCriteriaRatingsRead(b *testing.B) {
	n := 100000
	if v := os.Getenv("MODELS_BENCH_RATINGS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("MODELS_BENCH_RATINGS=%q is not a number of at least 10", v)
		}
	}
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	for _, d := range dialects {
		db := dbtest.Open(b, d)
		ctx := context.Background()
		ws, ds := seedRatings(b, db, max(n/2, 1), n)
		criteria := []string{"coh", "flu"}
		var want int
		// median is the median of five reads' wall time and of their
		// process CPU time: the machine is shared, and the CPU a read
		// takes moves less with the others' load than its wall time (on
		// PostgreSQL it leaves out the server's share).
		median := func(fn func() int) (wall, cpu time.Duration) {
			var walls, cpus []time.Duration
			for range 5 {
				start, used := time.Now(), proccpu.Now(b)
				want = fn()
				walls, cpus = append(walls, time.Since(start)), append(cpus, proccpu.Now(b).Sub(used).CPU)
			}
			slices.Sort(walls)
			slices.Sort(cpus)
			return walls[2], cpus[2]
		}
		count := func(m map[string][]models.ReviewRating, err error) int {
			if err != nil {
				b.Fatal(err)
			}
			k := 0
			for _, rs := range m {
				k += len(rs)
			}
			return k
		}
		b.Run(fmt.Sprintf("%s/reviews=%d", d, n), func(b *testing.B) {
			for b.Loop() {
				before, beforeCPU := median(func() int { return count(wholeReviews(ctx, db, ws.ID, ds.ID, criteria, 0)) })
				read := want
				after, afterCPU := median(func() int { return count(db.ListCriteriaRatings(ctx, ws.ID, ds.ID, criteria, 0)) })
				if want != read {
					b.Fatalf("%d ratings read, %d before", want, read)
				}
				b.Logf("%s, %d reviews (%d of the two criteria): whole reviews %v (CPU %v), ratings' columns %v (CPU %v), ratio %.2fx (CPU %.2fx)",
					d, n, read, before.Round(time.Millisecond), beforeCPU.Round(time.Millisecond), after.Round(time.Millisecond), afterCPU.Round(time.Millisecond),
					float64(before)/float64(after), float64(beforeCPU)/float64(afterCPU))
				b.ReportMetric(float64(before)/float64(after), "before/after")
				b.ReportMetric(float64(beforeCPU)/float64(afterCPU), "cpu-before/after")
			}
		})
	}
}
