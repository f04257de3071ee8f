package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// runningRunWithRatings is a finished demo run made running again (its
// figures are then the shared live ones), with ratings by Ann of four
// samples on each criterion and its report using the browser ratings.
func (env *testEnv) runningRunWithRatings(t *testing.T) (models.Run, demoChoices) {
	t.Helper()
	ctx := context.Background()
	d := env.demo()
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
	must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
	run, err = env.db.GetRun(ctx, run.ID)
	must(t, err)
	// A view waits for its figures' computation, however loaded the
	// machine: the figures compared are the view's own.
	env.h.live.wait = time.Minute
	return run, d
}

// TestRunningRunPageReadsRatingsOnlyWhenTheyChange: a view of a running
// run's page read every current browser rating of its criteria, now and
// as of the cut-off (report.ReadBrowserReviews), for its human-ratings box
// and to key its shared figures by their reviewers (reviewersKey), at
// every view, while nothing changed (a 100,000-sample run: BENCHMARKS.md,
// liveratings49). Now its box is counted in SQL (countedHumanSourceView)
// and its figures are keyed by the ratings' key, which the run's ratings
// proof gives without reading them (liveRatingsKey): a view reads the
// reviews once when what the figures read changed (the ratings chosen
// again: the proof no longer holds, and the figures' computation reads
// them from the same read) and never otherwise, ratings given after the
// cut-off included (counted by the box, not read by the figures). On
// both databases; the old path (readEveryRating) reads them at each view.
func TestRunningRunPageReadsRatingsOnlyWhenTheyChange(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run, d := env.runningRunWithRatings(t)
		page := fmt.Sprintf("/runs/%d", run.ID)
		if rec := env.get(page); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="provisional"`) {
			t.Fatalf("GET %s: %d, want the provisional figures of a running run", page, rec.Code)
		}
		var mu sync.Mutex
		var reads, tallies, counts []string
		// The request's own queries (its figures' computation keeps its
		// context's values), but the shown samples' whole reviews
		// (row_id IN), read to say why a rating is missing.
		env.onRequestQueries(t, "count_live_review_reads", func(q string) {
			if !strings.Contains(q, "review_ratings") || strings.Contains(q, "row_id IN (") {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case isRatingsTally(q):
				tallies = append(tallies, q)
			case strings.Contains(q, "SELECT COUNT(CASE WHEN n.score"):
				counts = append(counts, q)
			default:
				reads = append(reads, q)
			}
		})
		pending := regexp.MustCompile(`data-testid="human-source-pending">(\d+) browser rating`)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[0]
		for _, view := range []struct {
			name      string
			everyRead bool // the old path (readEveryRating)
			before    func()
			// reads are the reads of the reviews the view makes;
			// pending the ratings the box says the report does not use
			// yet (-1: not said).
			reads, pending int
		}{
			{"the old path, nothing changed", true, func() {}, 1, -1},
			{"nothing changed", false, func() {}, 0, -1},
			{"nothing changed, again", false, func() {}, 0, -1},
			{"a rating given after the cut-off", false, func() {
				v := crit.Hi
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[5].ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Bob", RunID: &run.ID, Score: &v, Lo: crit.Lo, Hi: crit.Hi})
				must(t, err)
			}, 0, 1},
			{"the ratings chosen again", false, func() {
				if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
					t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
				}
			}, 1, -1},
			{"nothing changed since", false, func() {}, 0, -1},
		} {
			view.before()
			env.h.live.readEveryRating = view.everyRead
			mu.Lock()
			reads, tallies, counts = nil, nil, nil
			mu.Unlock()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, page, nil)
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="human-source-used">browser ratings`) || !strings.Contains(body, `data-testid="provisional"`) {
				t.Fatalf("%s: GET %s: %d, want the provisional figures of a running run using browser ratings", view.name, page, rec.Code)
			}
			mu.Lock()
			got, gotTallies, gotCounts := slices.Clone(reads), slices.Clone(tallies), slices.Clone(counts)
			mu.Unlock()
			if len(got) != view.reads || (view.reads > 0 && !readsCurrentOfAll(got[0], len(d.rubric.Criteria))) {
				t.Errorf("%s: the view read the reviews in %d queries, want %d of the current ratings of all %d criteria:\n%s",
					view.name, len(got), view.reads, len(d.rubric.Criteria), strings.Join(got, "\n"))
			}
			if !view.everyRead {
				// The proof's tallies (to check it; before the read and
				// after it, when it is made), and the box counted in one
				// statement.
				if want := 1 + 2*view.reads; len(gotTallies) != want {
					t.Errorf("%s: the view tallied the reviews %d times, want %d", view.name, len(gotTallies), want)
				}
				if len(gotCounts) != 1 {
					t.Errorf("%s: the view counted the ratings in %d statements, want 1", view.name, len(gotCounts))
				}
			}
			if view.pending >= 0 {
				if p := pending.FindStringSubmatch(body); p == nil || p[1] != strconv.Itoa(view.pending) {
					t.Errorf("%s: the box says %v browser ratings not in the report yet, want %d", view.name, p, view.pending)
				}
			}
		}
	})
}

// TestRunningRunPageShowsWhatEveryRatingGave: a running run's page now
// counts its human-ratings box in SQL and keys its shared figures by the
// ratings' proved key (liveratings49), where it read every current rating
// at each view: after each change of a history of ratings (both
// databases), its figures (criteria, samples, the human ratings they say
// they used) equal the figures built from a fresh read of every current
// rating (as the old path built them), its box equals the old path's box
// counted from that read, and the page shows the box's counts. A change
// the figures read (a rating up to the cut-off deleted or edited, a rater
// excluded or readmitted, renamed, the ratings chosen again) is computed
// again; one they do not read (ratings after the cut-off) is not.
func TestRunningRunPageShowsWhatEveryRatingGave(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run, d := env.runningRunWithRatings(t)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, env.db, env.ws.ID, d.dataset.ID, rows, d.rubric.Criteria, 49, 400)
		account := func(email string) models.User {
			t.Helper()
			var u models.User
			must(t, env.db.Gorm.Where("email = ?", email).Take(&u).Error)
			return u
		}
		sam, rita := account("sam@x.test"), account("rita.new@x.test")
		// Accounts exist now: the page is viewed signed in.
		session := env.sessionCookie(env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner))
		choose := func(src models.HumanSource) {
			t.Helper()
			_, err := env.db.SetRunHumanSource(ctx, env.ws.ID, run.ID, src, "tester")
			must(t, err)
		}
		choose(models.HumansBrowser)
		hist.Review(60) // after the cut-off
		exec := func(q string, args ...any) {
			t.Helper()
			must(t, env.db.Gorm.Exec(q, args...).Error)
		}
		// aRating is a current rating the report reads.
		aRating := func() models.ReviewRating {
			t.Helper()
			pre, err := report.ReadChosenReviews(ctx, env.db, run)
			must(t, err)
			for _, rs := range pre.ByName {
				for _, r := range rs {
					if r.Score != nil {
						return r
					}
				}
			}
			t.Fatal("no current rating read")
			return models.ReviewRating{}
		}
		pending := regexp.MustCompile(`data-testid="human-source-pending">(\d+) browser rating`)
		withdrawn := regexp.MustCompile(`data-testid="human-source-withdrawn">(\d+) withdrawn rating`)
		for _, step := range []struct {
			name      string
			change    func()
			recompute bool
		}{
			{"the ratings chosen", func() {}, true},
			{"nothing changed", func() {}, false},
			{"ratings given and withdrawn after the cut-off", func() { hist.Review(30) }, false},
			{"a rater excluded", func() { must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, sam.ID, true, "owner")) }, true},
			{"the exclusion lifted", func() { must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, sam.ID, false, "owner")) }, true},
			{"a rater renamed", func() { exec("UPDATE users SET name = ? WHERE id = ?", "Rita B", rita.ID) }, true},
			{"a current rating edited in place", func() {
				r := aRating()
				exec("UPDATE review_ratings SET score = ? WHERE id = ?", r.Lo+r.Hi-*r.Score+0.5, r.ID)
			}, true},
			{"a current rating deleted", func() { exec("DELETE FROM review_ratings WHERE id = ?", aRating().ID) }, true},
			{"imported and browser ratings chosen, with those since", func() { choose(models.HumansBoth); hist.Review(20) }, true},
		} {
			step.change()
			run, err = env.db.GetRun(ctx, run.ID)
			must(t, err)
			builds := env.h.live.builds.Load()
			// The page's way: reviews on demand, the box counted in SQL.
			pre, err := report.ChosenReviewsOnDemand(env.localCtx(), env.db, run)
			must(t, err)
			lv, stale, err := env.h.liveFiguresFor(env.localCtx(), run, report.Options{Reviews: pre})
			must(t, err)
			if stale {
				t.Fatalf("%s: the last figures shown while newer are computed", step.name)
			}
			if built := env.h.live.builds.Load() > builds; built != step.recompute {
				t.Errorf("%s: the figures computed again: %v, want %v", step.name, built, step.recompute)
			}
			box, err := env.h.countedHumanSourceView(ctx, run, lv.rep, true)
			must(t, err)
			// The old path's: every current rating read, the figures
			// built from them, the box counted from them.
			every, err := report.ReadBrowserReviews(ctx, env.db, run)
			must(t, err)
			old, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, run.ID, report.Options{Reviews: every})
			must(t, err)
			oldBox := humanSourceView(run, old, every, true)
			if !equalNaN(reflect.ValueOf(old.Criteria), reflect.ValueOf(lv.rep.Criteria)) {
				t.Errorf("%s: the page's figures differ from those built from every current rating", step.name)
			}
			if !reflect.DeepEqual(old.Humans, lv.rep.Humans) {
				t.Errorf("%s: the page's figures used\n%+v\nthose built from every current rating\n%+v", step.name, lv.rep.Humans, old.Humans)
			}
			if !reflect.DeepEqual(box, oldBox) {
				t.Errorf("%s: the box says\n%+v\ncounted from every current rating\n%+v", step.name, box, oldBox)
			}
			rec := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", session)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="provisional"`) {
				t.Fatalf("%s: the run page: %d, want its provisional figures", step.name, rec.Code)
			}
			p, w := pending.FindStringSubmatch(body), withdrawn.FindStringSubmatch(body)
			if oldBox.NotUsed > 0 && (p == nil || p[1] != strconv.Itoa(oldBox.NotUsed)) {
				t.Errorf("%s: the page says %v not in the report, want %d", step.name, p, oldBox.NotUsed)
			}
			if oldBox.Withdrawn > 0 && (w == nil || w[1] != strconv.Itoa(oldBox.Withdrawn)) {
				t.Errorf("%s: the page says %v withdrawn, want %d", step.name, w, oldBox.Withdrawn)
			}
		}
	})
}
