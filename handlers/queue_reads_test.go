package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// TestReviewQueueAndAlignmentReadReviewsOnce: a view of the review queue
// or of an alignment of a run whose report counts browser ratings reads
// the reviews once, in one query for all the run's criteria, and passes
// them along (report.ReadBrowserReviews), as the run page does
// (TestRunPageReadsReviewsOnce), whether the run's summary is stored,
// built by the view or in memory. The old code read them to key the
// summary, again to check that the stored samples are current
// (report.StoredSamplesCurrent), and the queue once more for its own
// counts: up to three reads. The queue's counts read the reviewer's own
// ratings of the criterion alone (models.ListReviewerRatedRows, one query)
// and never every review: under the imported ratings the queue reads none
// of the others' (it read every review of the dataset before, queue45).
func TestReviewQueueAndAlignmentReadReviewsOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		if len(d.rubric.Criteria) < 2 {
			t.Fatalf("%d criteria: the test needs several", len(d.rubric.Criteria))
		}
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		// The alignment is split while the report has the imported ratings
		// (every sample rated); then the reviewers' ratings join them.
		rec := env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/alignments/") {
			t.Fatalf("start the alignment: %d %s", rec.Code, rec.Body.String())
		}
		alignment := rec.Header().Get("Location")
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
		queue := "/datasets/" + strconv.FormatInt(d.dataset.ID, 10) + "/review?run=" + strconv.FormatInt(run.ID, 10) + "&criterion=1"
		pages := []struct {
			name, path, shows string
		}{
			{"review queue", queue, `data-testid="review-form"`},
			{"alignment", alignment, `data-testid="draft-form"`},
		}
		// The first view stores the summary: wait until a view finds it.
		waitStored := func(t *testing.T) {
			for _, p := range pages {
				for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					rec := env.get(p.path)
					if rec.Code != http.StatusOK {
						t.Fatalf("GET %s: %d", p.path, rec.Code)
					}
					if !strings.Contains(rec.Body.String(), "being prepared") {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("GET %s: the results were still being prepared after a minute", p.path)
					}
				}
			}
		}

		var mu sync.Mutex
		// reads are the reads of every review of the run's dataset;
		// sampleReads those of the shown sample's (the queue's, whole);
		// ownReads those of the reviewer's own ratings.
		// tallies are the ratings proof's tallies (isRatingsTally), which
		// read no review.
		// teamReads are the queue's count of the samples the team rated
		// (models.TeamRatedSamples, the one read that names the excluded
		// raters' table).
		var reads, sampleReads, ownReads, teamReads, tallies []string
		count := func(tx *gorm.DB) {
			// Only the request's own reads: the runner and earlier
			// requests' background work share these handles.
			if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil {
				return
			}
			q := tx.Statement.SQL.String()
			if !strings.Contains(q, "review_ratings") {
				return
			}
			mu.Lock()
			if isRatingsTally(q) {
				tallies = append(tallies, q)
			} else if strings.Contains(q, "rating_exclusions") {
				teamReads = append(teamReads, q)
			} else if strings.Contains(q, "row_id IN (") {
				sampleReads = append(sampleReads, q)
			} else if strings.Contains(q, "NOT EXISTS") {
				ownReads = append(ownReads, q)
			} else {
				reads = append(reads, q)
			}
			mu.Unlock()
		}
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			// Queries, and the rows read by hand (models.ListCriteriaRatings).
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_queue_review_reads", count))
			must(t, g.Callback().Row().After("gorm:row").Register("test:count_queue_review_reads", count))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove("test:count_queue_review_reads")
				_ = g.Callback().Row().Remove("test:count_queue_review_reads")
			})
		}
		// Under the imported ratings neither reads every review (the queue
		// read them for its counts before); with browser ratings counted,
		// each reads them once when it builds the run's report, and not at
		// all when the run's stored results are proved current by its
		// ratings proof (ratings48: they read them once to key the stored
		// summary before).
		for _, src := range []struct {
			source string
			reads  map[string]int
		}{
			{"imported", map[string]int{}},
			{"both", map[string]int{"summary built by the view": 1}},
		} {
			if src.source != "imported" {
				if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {src.source}}); rec.Code != http.StatusSeeOther {
					t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
				}
			}
			waitStored(t)
			for _, p := range pages {
				t.Run(src.source+" ratings, "+p.name, func(t *testing.T) {
					// Views by other server processes (nothing of the run in
					// their memory) and a second view by the last one.
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
						reads, sampleReads, ownReads, teamReads, tallies = nil, nil, nil, nil, nil
						mu.Unlock()
						rec := httptest.NewRecorder()
						req := httptest.NewRequest(http.MethodGet, p.path, nil)
						req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
						view.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
						if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), p.shows) {
							t.Fatalf("%s: GET %s: %d, want the page showing %s:\n%s", view.name, p.path, rec.Code, p.shows, rec.Body.String())
						}
						mu.Lock()
						got, gotSample, gotOwn, gotTeam, gotTallies := slices.Clone(reads), slices.Clone(sampleReads), slices.Clone(ownReads), slices.Clone(teamReads), slices.Clone(tallies)
						mu.Unlock()
						// To prove the stored results current, and before
						// a read of the reviews.
						if len(gotTallies) > 2 {
							t.Errorf("%s: the %s tallied the reviews %d times, want at most 2", view.name, p.name, len(gotTallies))
						}
						// The queue counts the reviewer's own ratings in one
						// query; the alignment counts none.
						if want := map[string]int{"review queue": 1}[p.name]; len(gotOwn) != want {
							t.Errorf("%s: the %s read the reviewer's own ratings in %d queries, want %d:\n%s", view.name, p.name, len(gotOwn), want, strings.Join(gotOwn, "\n"))
						}
						// The queue counts the team's rated samples in at
						// most one query (none while the dataset's review
						// version stands: reviewperf51); the alignment
						// counts none.
						if most := map[string]int{"review queue": 1}[p.name]; len(gotTeam) > most {
							t.Errorf("%s: the %s counted the team's rated samples in %d queries, want at most %d:\n%s", view.name, p.name, len(gotTeam), most, strings.Join(gotTeam, "\n"))
						}
						// The queue reads its shown sample's reviews whole,
						// once; the alignment shows none.
						if want := map[string]int{"review queue": 1}[p.name]; len(gotSample) != want {
							t.Errorf("%s: the %s read a sample's reviews in %d queries, want %d:\n%s", view.name, p.name, len(gotSample), want, strings.Join(gotSample, "\n"))
						}
						if want := src.reads[view.name]; len(got) != want || (want > 0 && !readsCurrentOfAll(got[0], len(d.rubric.Criteria))) {
							t.Errorf("%s: the %s read the reviews in %d queries, want %d (the current ratings of all %d criteria at once):\n%s",
								view.name, p.name, len(got), want, len(d.rubric.Criteria), strings.Join(got, "\n"))
						}
					}
				})
			}
		}
	})
}
