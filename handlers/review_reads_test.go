package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// countedRequest marks the context of the request whose queries a test
// counts.
type countedRequest struct{}

// readsCurrentOfAll tells whether q, a read of review_ratings, reads the
// current ratings (models.ListCurrentRatings: the latest review of each
// group, not every review) of n criteria at once.
func readsCurrentOfAll(q string, n int) bool {
	return strings.Contains(q, "MAX(m.id)") && strings.Count(q, "m.criterion = ") == n
}

// isRatingsTally says whether q is the tally of a run's reviews that its
// ratings proof holds (models.TallyRatings, ratings48): five numbers,
// not a read of the reviews.
func isRatingsTally(q string) bool {
	return strings.HasPrefix(q, "SELECT COUNT(*), COUNT(user_id),") && !strings.Contains(q, "MAX(m.id)")
}

// TestRunPageReadsReviewsOnce: a view of the page of a run using browser
// ratings reads the current reviews of all its criteria once, in one
// query (not every review, since reviews47), and
// passes them along (report.ReadBrowserReviews, Options.Reviews), whether
// it finds the run's summary in memory, stored, or must build it. The old
// code read them to key the stored summary (report's usedRatingsKey) and
// again to count the ratings the report does not use yet
// (humanSourceView): two reads for a stored summary, four when the view
// built it (the build keyed it and read the ratings once more). Since
// ratings48 a finished run's page counts them in one statement
// (models.CountCurrentRatings) and reads them only when it builds its
// report: the stored summary's key is proved current by its ratings proof.
func TestRunPageReadsReviewsOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		if len(d.rubric.Criteria) < 2 {
			t.Fatalf("%d criteria: the test needs several", len(d.rubric.Criteria))
		}
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		for _, crit := range d.rubric.Criteria {
			for _, r := range rows[:4] {
				v := crit.Lo
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: r.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &run.ID, Score: &v, Lo: crit.Lo, Hi: crit.Hi})
				must(t, err)
			}
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		page := fmt.Sprintf("/runs/%d", run.ID)
		// The first view stores the summary, in the background when the
		// build takes a while: wait until a view finds it stored.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			rec := env.get(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			if !strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: the results were still being prepared after a minute", page)
			}
		}

		var mu sync.Mutex
		// tallies are the ratings proof's tallies of the reviews
		// (isRatingsTally), which read none.
		var reads, tallies, counts []string
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			count := func(tx *gorm.DB) {
				// Only the request's own reads: the runner and the first
				// GET's background work share these handles. The shown
				// samples' whole reviews (row_id IN), read to say why a
				// human rating is missing, are not the run's every review.
				if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil {
					return
				}
				if q := tx.Statement.SQL.String(); strings.Contains(q, "review_ratings") && !strings.Contains(q, "row_id IN (") {
					mu.Lock()
					if isRatingsTally(q) {
						tallies = append(tallies, q)
					} else if strings.Contains(q, "SELECT COUNT(CASE WHEN n.score") {
						counts = append(counts, q)
					} else {
						reads = append(reads, q)
					}
					mu.Unlock()
				}
			}
			// Queries, and the rows read by hand (models.ListCriteriaRatings).
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_review_reads", count))
			must(t, g.Callback().Row().After("gorm:row").Register("test:count_review_reads", count))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove("test:count_review_reads")
				_ = g.Callback().Row().Remove("test:count_review_reads")
			})
		}
		// Views by other server processes (nothing of the run in their
		// memory) and a second view by the last one (its summary cached).
		_, stored := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		_, built := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		for _, view := range []struct {
			name   string
			e      *echo.Echo
			before func()
		}{
			{"summary stored", stored, func() {}},
			{"summary built by the view", built, func() {
				must(t, env.db.Gorm.Where("run_id = ?", run.ID).Delete(&models.RunSummary{}).Error)
			}},
			{"summary in memory", built, func() {}},
		} {
			view.before()
			mu.Lock()
			reads, tallies, counts = nil, nil, nil
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, page, nil)
			view.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="human-source-used">browser ratings`) {
				t.Fatalf("%s: GET %s: %d, want the page of a run using browser ratings", view.name, page, rec.Code)
			}
			mu.Lock()
			got, gotTallies, gotCounts := slices.Clone(reads), slices.Clone(tallies), slices.Clone(counts)
			mu.Unlock()
			// One before the read (the proof of what it reads) and one to
			// prove the stored summary current (ratings48).
			if len(gotTallies) > 2 {
				t.Errorf("%s: the run page tallied the reviews %d times, want at most 2", view.name, len(gotTallies))
			}
			// The box counts the current ratings in one statement
			// (models.CountCurrentRatings); the reviews are read only to
			// build the report.
			if len(gotCounts) != 1 || !strings.Contains(gotCounts[0], "MAX(m.id)") || strings.Count(gotCounts[0], "m.criterion = ") != len(d.rubric.Criteria) {
				t.Errorf("%s: the run page counted the ratings in %d statements, want one over all %d criteria:\n%s",
					view.name, len(gotCounts), len(d.rubric.Criteria), strings.Join(gotCounts, "\n"))
			}
			want := map[string]int{"summary built by the view": 1}[view.name]
			if len(got) != want || (want > 0 && !readsCurrentOfAll(got[0], len(d.rubric.Criteria))) {
				t.Errorf("%s: the run page read the reviews in %d queries, want %d of the current ratings of all %d criteria:\n%s",
					view.name, len(got), want, len(d.rubric.Criteria), strings.Join(got, "\n"))
			}
		}
	})
}

// TestSamplePageReadsReviewsAndScalesOnce: the sample page of an LLM-Eval
// run stored before runs kept the rubric's scale reads the reviews of all
// its criteria in one query and the run's rubric version (where that scale
// now comes from) once, whatever the number of criteria. The old code read
// both per criterion (sampleReviewPanel: currentReviews and RunHumanScale).
func TestSamplePageReadsReviewsAndScalesOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		if len(d.rubric.Criteria) < 2 {
			t.Fatalf("%d criteria: the test needs several", len(d.rubric.Criteria))
		}
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		old := llm.RubricSnapshot
		for i := range old.Criteria {
			old.Criteria[i].RubricScale = nil
		}
		b, err := json.Marshal(old)
		must(t, err)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", llm.ID).Update("rubric_snapshot", string(b)).Error)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)

		var mu sync.Mutex
		reads := map[string][]string{}
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_sample_reads", func(tx *gorm.DB) {
				if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil {
					return
				}
				q := tx.Statement.SQL.String()
				for _, table := range []string{"review_ratings", "rubric_versions"} {
					if strings.Contains(q, table) {
						mu.Lock()
						reads[table] = append(reads[table], q)
						mu.Unlock()
					}
				}
			}))
			t.Cleanup(func() { _ = g.Callback().Query().Remove("test:count_sample_reads") })
		}
		page := fmt.Sprintf("/runs/%d/samples/%d", llm.ID, rows[0].ID)
		req := httptest.NewRequest(http.MethodGet, page, nil)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
		body := rec.Body.String()
		if strings.Count(body, `data-testid="review-form"`) != len(d.rubric.Criteria) || !strings.Contains(body, "Your rating of Coherent (1 to 3)") {
			t.Fatalf("GET %s: want a form per criterion on the rubric version's scale:\n%s", page, body)
		}
		for table, want := range map[string]int{"review_ratings": 1, "rubric_versions": 1} {
			if got := len(reads[table]); got != want {
				t.Errorf("the sample page read %s in %d queries, want %d (%d criteria):\n%s", table, got, want,
					len(d.rubric.Criteria), strings.Join(reads[table], "\n"))
			}
		}
	})
}
