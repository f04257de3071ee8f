package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// alignmentPage renders an alignment's page from the runs' stored results
// (or, with full, their full reports), returning an error rather than
// failing the test so that several goroutines can render at once.
func alignmentPage(env *testEnv, a models.Alignment, run models.Run, full bool) (web.AlignmentView, string, error) {
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/alignments/%d", a.ID), nil).WithContext(env.localCtx())
	c := env.e.NewContext(req, httptest.NewRecorder())
	v, err := env.h.alignmentViewWith(c, a, run, run.RubricSnapshot.Criteria[a.CriterionIndex], draftFormOf(a.Draft), nil, full)
	if err != nil {
		return v, "", err
	}
	var buf bytes.Buffer
	if err := web.AlignmentPage(v).Render(context.Background(), &buf); err != nil {
		return v, "", err
	}
	return v, buf.String(), nil
}

// heldOutCounter counts the held-out comparisons computed, and holds each
// until release is closed when hold is set.
type heldOutCounter struct {
	n       atomic.Int64
	hold    bool
	release chan struct{}
}

func (hc *heldOutCounter) install(rc *reportCache) {
	rc.compareHeldOut = func(a models.Alignment, before, after []models.SampleScore) []web.AlignComparison {
		hc.n.Add(1)
		if hc.hold {
			<-hc.release
		}
		return heldOutComparisons(a, before, after)
	}
}

// pendingHeldOut says whether a page shows the held-out comparison as being
// computed in the background, with none of its figures.
func pendingHeldOut(v web.AlignmentView, page string) bool {
	return len(v.Comparisons) == 0 && strings.Contains(v.CompareNote, "being computed once") &&
		strings.Contains(page, `data-testid="compare-note"`) && !strings.Contains(page, `data-testid="comparison"`)
}

// heldOutSetup is a reviewed synthetic run of n samples (the alignment's
// source) and two more runs of its dataset standing for the held-out runs
// of the old and new versions, with an accepted alignment of criterion 0
// by seed between them.
func heldOutSetup(t *testing.T, env *testEnv, n int, seed int64) (run models.Run, a models.Alignment) {
	t.Helper()
	ctx := env.localCtx()
	ds, ids, run := reviewedSynthRun(t, env, n)
	before, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 1))
	mustB(t, err)
	after, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 2))
	mustB(t, err)
	plan, err := env.h.planAlignment(ctx, run, 0, seed, 0.5, false)
	mustB(t, err)
	nv := 2
	a = models.Alignment{ID: 1, WorkspaceID: env.ws.ID, SourceRunID: run.ID, Seed: seed, CalibrationRowIDs: plan.calibration,
		HeldOutRowIDs: plan.heldOut, BaseVersion: 1, Status: models.AlignmentAccepted, NewVersion: &nv, BeforeRunID: &before.ID,
		AfterRunID: &after.ID, Draft: align.TemplateDraft(run.RubricSnapshot.Criteria[0], plan.worst)}
	return run, a
}

// TestHeldOutComparisonInBackground: the alignment page's held-out
// comparison is computed in the request for small runs and cached; past
// pairLiveSamples the first views (several at once) answer while it is
// being computed once in the background, and the page after it shows
// exactly the figures of the in-request path (and of the full reports). A
// new choice of human ratings for a held-out run, another seed or another
// alignment do not get the cached comparison.
func TestHeldOutComparisonInBackground(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 120
		run, a := heldOutSetup(t, env, n, 7)
		render := func(a models.Alignment, full bool) (web.AlignmentView, string) {
			t.Helper()
			v, page, err := alignmentPage(env, a, run, full)
			mustB(t, err)
			return v, page
		}
		figures := func(v web.AlignmentView) string { return fmt.Sprintf("%+v", v.Comparisons) }

		// The full reports' comparison, computed afresh each time: the oracle.
		oracle, _ := render(a, true)
		if len(oracle.Comparisons) != len(stats.Methods()) || oracle.Comparisons[0].Difference.N != n {
			t.Fatalf("oracle: %d comparisons (%+v), want %d on %d samples", len(oracle.Comparisons), oracle.Comparisons, len(stats.Methods()), n)
		}

		// Small runs: computed in the request, then read from the cache.
		env.h.reports = newReportCache()
		var live heldOutCounter
		live.install(env.h.reports)
		vLive, pageLive := render(a, false)
		if figures(vLive) != figures(oracle) {
			t.Fatalf("in-request comparison differs from the full reports':\n%s\n%s", figures(vLive), figures(oracle))
		}
		if again, pageAgain := render(a, false); live.n.Load() != 1 || pageAgain != pageLive || figures(again) != figures(vLive) {
			t.Fatalf("second view: %d computations, same page %v; want 1 and the same page", live.n.Load(), pageAgain == pageLive)
		}

		// Past pairLiveSamples: the first views do not wait, one
		// computation serves them all, and its figures are the same.
		env.h.pairLiveSamples = n / 2
		env.h.reports = newReportCache()
		bg := heldOutCounter{hold: true, release: make(chan struct{})}
		bg.install(env.h.reports)
		const views = 4
		var wg sync.WaitGroup
		errs := make([]error, views)
		for i := range views {
			wg.Go(func() {
				v, page, err := alignmentPage(env, a, run, false)
				if err == nil && !pendingHeldOut(v, page) {
					err = fmt.Errorf("view %d while held: %d comparisons, note %q; want it pending", i, len(v.Comparisons), v.CompareNote)
				}
				errs[i] = err
			})
		}
		// The computation is held: the views can only end without it.
		ended := make(chan struct{})
		go func() { wg.Wait(); close(ended) }()
		select {
		case <-ended:
			close(bg.release)
		case <-time.After(30 * time.Second):
			close(bg.release)
			<-ended
			t.Fatal("the first views of a large pair waited for its held comparison")
		}
		for _, err := range errs {
			mustB(t, err)
		}
		env.h.reports.settling.Wait()
		if got := bg.n.Load(); got != 1 {
			t.Fatalf("%d concurrent first views computed the comparison %d times, want once", views, got)
		}
		vBg, pageBg := render(a, false)
		if figures(vBg) != figures(vLive) || pageBg != pageLive {
			t.Fatalf("background comparison differs from the in-request one:\n%s\n%s", figures(vBg), figures(vLive))
		}
		if bg.n.Load() != 1 {
			t.Fatalf("the view after the background computation computed it again (%d)", bg.n.Load())
		}

		// Another seed, or another alignment of the same runs, is another
		// comparison: not served from this one's cache entry.
		other := a
		other.Seed = 8
		otherID := a
		otherID.ID = 2
		for _, tc := range []struct {
			name string
			a    models.Alignment
		}{{"another seed", other}, {"another alignment", otherID}} {
			bg.n.Store(0)
			v, page := render(tc.a, false)
			if !pendingHeldOut(v, page) {
				t.Fatalf("%s: served %d cached comparisons (%q), want them computed anew", tc.name, len(v.Comparisons), v.CompareNote)
			}
			env.h.reports.settling.Wait()
			want, _ := render(tc.a, true)
			got, _ := render(tc.a, false)
			if bg.n.Load() != 2 || figures(got) != figures(want) { // the background one and the oracle's
				t.Fatalf("%s: %d computations, figures\n%s\nwant\n%s", tc.name, bg.n.Load(), figures(got), figures(want))
			}
		}
		if otherSeed, _ := render(other, false); figures(otherSeed) == figures(vLive) {
			t.Error("another seed gives the same figures: the test cannot tell the keys apart")
		}

		// A new choice of human ratings for the before run (it bumps the
		// run's HumansVersion) is not served the previous comparison.
		bg.n.Store(0)
		before, err := env.db.FindRun(env.localCtx(), env.ws.ID, *a.BeforeRunID)
		mustB(t, err)
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", before.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		if now, _ := env.db.FindRun(env.localCtx(), env.ws.ID, before.ID); now.HumansVersion == before.HumansVersion {
			t.Fatalf("the new human ratings left the run's HumansVersion at %d", now.HumansVersion)
		}
		v, page := render(a, false)
		if !pendingHeldOut(v, page) {
			t.Fatalf("after new human ratings: served %d cached comparisons (%q), want them computed anew", len(v.Comparisons), v.CompareNote)
		}
		env.h.reports.settling.Wait()
		want, _ := render(a, true)
		got, _ := render(a, false)
		if figures(got) != figures(want) || bg.n.Load() != 2 {
			t.Fatalf("after new human ratings: %d computations, figures\n%s\nwant\n%s", bg.n.Load(), figures(got), figures(want))
		}
		if figures(want) == figures(vLive) {
			t.Error("the new human ratings give the same figures: the test cannot tell them apart")
		}
	})
}

// TestHeldOutComparisonFailureIsSaid: when the background computation of
// a held-out comparison fails, the page says so (the previous attempt
// failed, it is tried again) instead of "being computed" as if nothing had
// happened; after the pause a new attempt starts, and its figures show.
func TestHeldOutComparisonFailureIsSaid(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 60
		run, a := heldOutSetup(t, env, n, 3)
		env.h.pairLiveSamples = n / 2
		rc := newReportCache()
		env.h.reports = rc
		var attempts atomic.Int64
		rc.compareHeldOut = func(a models.Alignment, before, after []models.SampleScore) []web.AlignComparison {
			if attempts.Add(1) == 1 {
				panic("the first attempt fails")
			}
			return heldOutComparisons(a, before, after)
		}
		const failedNote = "previous attempt to compute them failed"
		view := func(stage string) web.AlignmentView {
			t.Helper()
			v, _, err := alignmentPage(env, a, run, false)
			mustB(t, err)
			rc.settling.Wait()
			return v
		}
		if v := view("first"); !strings.Contains(v.CompareNote, "being computed once") || strings.Contains(v.CompareNote, failedNote) {
			t.Fatalf("first view: note %q; want being computed, no failure", v.CompareNote)
		}
		if attempts.Load() != 1 {
			t.Fatalf("%d attempts after the first view, want 1", attempts.Load())
		}
		// Within the pause: no new attempt, and the page says why.
		if v := view("within the pause"); !strings.Contains(v.CompareNote, failedNote) || len(v.Comparisons) != 0 {
			t.Errorf("view after a failed attempt: note %q, %d comparisons; want the failure said", v.CompareNote, len(v.Comparisons))
		}
		if attempts.Load() != 1 {
			t.Errorf("a view within the pause after a failure started another attempt (%d)", attempts.Load())
		}
		// After the pause: tried again (still saying the last one failed),
		// and then the figures.
		rc.mu.Lock()
		for k := range rc.failedBuilds {
			rc.failedBuilds[k] = time.Now().Add(-failedBuildPause - time.Second)
		}
		rc.mu.Unlock()
		if v := view("after the pause"); !strings.Contains(v.CompareNote, failedNote) {
			t.Errorf("view starting the retry: note %q; want the previous failure said", v.CompareNote)
		}
		if v := view("after the retry"); len(v.Comparisons) != len(stats.Methods()) || attempts.Load() != 2 {
			t.Errorf("after the retry: %d comparisons, %d attempts; want %d and 2", len(v.Comparisons), attempts.Load(), len(stats.Methods()))
		}
		if !errors.Is(errPairRetried, errPairPending) {
			t.Error("a retried comparison is not also pending for the pages that only ask that")
		}
	})
}
