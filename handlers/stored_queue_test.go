package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// outcomesOf is what the queue orders of a report's samples.
func outcomesOf(samples []report.SampleResult) []models.SampleOutcome {
	out := make([]models.SampleOutcome, len(samples))
	for i, s := range samples {
		out[i] = models.SampleOutcome{RowID: s.RowID, Final: s.Final, Human: s.Human, AbsDiff: s.AbsDiff, Rounds: s.Rounds}
	}
	return out
}

// renderQueue renders the review queue of ds at query q as reviewer
// (empty: none), from the run's stored results or (full) its full report.
func renderQueue(t *testing.T, env *testEnv, ds models.Dataset, q, reviewer string, full bool) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?%s", ds.ID, q), nil).WithContext(env.localCtx())
	if reviewer != "" {
		req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: url.QueryEscape(reviewer)})
	}
	rec := httptest.NewRecorder()
	c := env.e.NewContext(req, rec)
	c.SetParamNames("id")
	c.SetParamValues(strconv.FormatInt(ds.ID, 10))
	if err := env.h.reviewQueue(c, full); err != nil {
		t.Fatalf("queue ?%s (full %v): %v", q, full, err)
	}
	return rec.Code, rec.Body.String()
}

// reviewedSynthRun is a finished synthetic run of n samples (two criteria
// with human columns, two rounds, some unreadable scores) whose dataset
// has browser reviews by two reviewers on both criteria, some of them
// without a score, one changed later.
func reviewedSynthRun(t *testing.T, env *testEnv, n int) (models.Dataset, []int64, models.Run) {
	t.Helper()
	ctx := context.Background()
	ds, ids := synthDataset(t, env.db, env.project, n)
	run, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 0))
	if err != nil {
		t.Fatal(err)
	}
	for ci, crit := range run.RubricSnapshot.Criteria {
		for k, id := range ids {
			if k%3 != ci {
				continue
			}
			for _, who := range []string{"Ann", "Bob"} {
				r := models.ReviewRating{WorkspaceID: ds.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name, HumanColumn: crit.HumanColumn,
					Reviewer: who, RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Comment: "unsure"}
				if who == "Ann" || k%2 == 0 {
					v := float64(1 + (k*3+ci)%5)
					r.Score = &v
				}
				if _, err := env.db.AddReviewRating(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return ds, ids, run
}

// queueQueries are the places of a queue the differential tests open: each
// order (the random one with two seeds), the first unrated sample and
// indexes from the first to past the last, blind and not.
func queueQueries(run models.Run, n int) []string {
	var qs []string
	for ci := range run.RubricSnapshot.Criteria {
		for _, o := range []string{"order=disagreement", "order=uncertain", "order=random", "order=random&seed=42"} {
			for _, i := range []string{"", "&i=0", "&i=1", "&i=7", fmt.Sprintf("&i=%d", n/2), fmt.Sprintf("&i=%d", n-1), fmt.Sprintf("&i=%d", n+5)} {
				for _, blind := range []string{"", "&blind=off"} {
					qs = append(qs, fmt.Sprintf("run=%d&criterion=%d&%s%s%s", run.ID, ci, o, i, blind))
				}
			}
		}
	}
	return qs
}

// compareQueues checks that every place of the queue is the same page from
// the stored results as from the full report, for two reviewers and none.
func compareQueues(t *testing.T, env *testEnv, stage string, ds models.Dataset, run models.Run, n int) {
	t.Helper()
	ctx := env.localCtx()
	if sum, err := env.h.storedResults(ctx, run, nil); err != nil || sum == nil {
		t.Fatalf("%s: the stored results would not be read (%v): the comparison below would compare the full path with itself", stage, err)
	}
	for ci := range run.RubricSnapshot.Criteria {
		stored, err := env.h.queueSamples(ctx, run, ci, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		full, err := env.h.queueSamples(ctx, run, ci, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		// DeepEqual follows the pointers: the same values, nil where nil.
		if len(stored.outcomes) != n || !reflect.DeepEqual(stored.outcomes, full.outcomes) {
			t.Fatalf("%s, criterion %d: the stored outcomes (%d) differ from the full report's (%d)", stage, ci, len(stored.outcomes), len(full.outcomes))
		}
		for _, o := range []string{orderDisagreement, orderUncertain, orderRandom} {
			if a, b := queueOrder(stored.outcomes, o, 3), queueOrder(full.outcomes, o, 3); !reflect.DeepEqual(a, b) {
				t.Errorf("%s, criterion %d, %s: order %v, the full report's %v", stage, ci, o, a[:10], b[:10])
			}
		}
	}
	for _, reviewer := range []string{"", "Ann", "Bob"} {
		for _, q := range queueQueries(run, n) {
			codeS, stored := renderQueue(t, env, ds, q, reviewer, false)
			codeF, full := renderQueue(t, env, ds, q, reviewer, true)
			if codeS != http.StatusOK || codeS != codeF || stored != full {
				i := 0
				for i < min(len(stored), len(full)) && stored[i] == full[i] {
					i++
				}
				t.Fatalf("%s, reviewer %q, ?%s: status %d/%d, the stored queue differs from the full report's at byte %d:\nstored: %.300s\nfull:   %.300s",
					stage, reviewer, q, codeS, codeF, i, stored[i:], full[i:])
			}
			if !strings.Contains(stored, `data-testid="review-sample"`) {
				t.Fatalf("%s, ?%s: no sample shown", stage, q)
			}
		}
	}
}

// rereadRun is run as stored now, as the next request reads it (choosing
// the human ratings again counts in its HumansVersion, and the stored
// path serves only the run as stored).
func rereadRun(t *testing.T, env *testEnv, run models.Run) models.Run {
	t.Helper()
	r, err := env.db.FindRun(env.localCtx(), env.ws.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStoredQueueIsTheFullReportsQueue: the review queue read from a
// finished run's stored results is, at every place, order and seed, for
// each criterion and reviewer, the page the full report gives, with the
// imported ratings and after the browser ratings joined the report; and
// it builds no full report (none is cached for the run).
func TestStoredQueueIsTheFullReportsQueue(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 90
		ds, _, run := reviewedSynthRun(t, env, n)
		compareQueues(t, env, "imported ratings", ds, run, n)
		for _, src := range []string{"both", "browser"} {
			if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {src}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
			}
			run = rereadRun(t, env, run) // as a request reads it: a new humans version
			compareQueues(t, env, src+" ratings", ds, run, n)
		}

		env.h.forgetReports(run.ID)
		if code, body := renderQueue(t, env, ds, fmt.Sprintf("run=%d&criterion=1&order=uncertain", run.ID), "Ann", false); code != http.StatusOK ||
			!strings.Contains(body, `data-testid="review-sample"`) {
			t.Fatalf("queue: %d", code)
		}
		env.h.reports.mu.Lock()
		_, built := env.h.reports.items[reportKey{runID: run.ID}]
		env.h.reports.mu.Unlock()
		if built {
			t.Errorf("the queue of a finished run built its full report")
		}
	})
}

// TestQueueFollowsANewReview: a browser rating that moves a sample's human
// rating moves it in the queue once the report uses it (the run's human
// source chosen again, as the run page offers): the stored results are
// read again, never the order before the rating. Until then the queue,
// like the report, keeps the ratings chosen.
func TestQueueFollowsANewReview(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 60
		ctx := env.localCtx()
		ds, _, run := reviewedSynthRun(t, env, n)
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		run = rereadRun(t, env, run)
		place := fmt.Sprintf("run=%d&criterion=0&order=disagreement&i=0&blind=off", run.ID)
		qs, err := env.h.queueSamples(ctx, run, 0, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		top := qs.outcomes[queueOrder(qs.outcomes, orderDisagreement, 1)[0]]
		if top.AbsDiff == nil || *top.AbsDiff == 0 || top.Final == nil {
			t.Fatalf("top of the queue %+v: want a disagreement", top)
		}
		_, before := renderQueue(t, env, ds, place, "Cy", false)
		if !strings.Contains(before, fmt.Sprintf("/samples/%d\"", top.RowID)) {
			t.Fatalf("the queue's first sample is not row %d", top.RowID)
		}
		// Cy rates the top sample as the judge did, through the page's form.
		crit := run.RubricSnapshot.Criteria[0]
		form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(top.RowID)}, "criterion": {crit.Name}, "reviewer": {"Cy"},
			"score": {strconv.FormatFloat(*top.Final, 'f', -1, 64)}, "back": {fmt.Sprintf("/datasets/%d/review?%s", ds.ID, place)}}
		if rec := env.postForm(fmt.Sprintf("/datasets/%d/review", ds.ID), form); rec.Code != http.StatusSeeOther {
			t.Fatalf("rating: %d %s", rec.Code, rec.Body.String())
		}
		// Not chosen yet: the report and the queue keep the ratings chosen.
		if now, err := env.h.queueSamples(ctx, run, 0, false, nil); err != nil || !reflect.DeepEqual(now.outcomes, qs.outcomes) {
			t.Errorf("before the recompute the queue's results changed (%v)", err)
		}
		if _, now := renderQueue(t, env, ds, place, "Cy", false); !strings.Contains(now, fmt.Sprintf("/samples/%d\"", top.RowID)) ||
			!strings.Contains(now, `data-testid="review-rated">1<`) {
			t.Errorf("before the recompute: want the same first sample, rated by Cy")
		}
		if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		run = rereadRun(t, env, run)
		qs, err = env.h.queueSamples(ctx, run, 0, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		order := queueOrder(qs.outcomes, orderDisagreement, 1)
		if qs.outcomes[order[0]].RowID == top.RowID {
			t.Errorf("row %d is still first after a rating that brings the humans to the judge", top.RowID)
		}
		for _, i := range order {
			if s := qs.outcomes[i]; s.RowID == top.RowID && (s.Human == nil || *s.Human == *top.Human || s.AbsDiff == nil || *s.AbsDiff >= *top.AbsDiff) {
				t.Errorf("row %d after the rating: human %v (was %v), difference %v (was %v)", top.RowID, s.Human, *top.Human, s.AbsDiff, *top.AbsDiff)
			}
		}
		_, after := renderQueue(t, env, ds, place, "Cy", false)
		if strings.Contains(after, fmt.Sprintf("/samples/%d\"", top.RowID)) {
			t.Errorf("the queue still opens on row %d", top.RowID)
		}
		compareQueues(t, env, "after the new rating", ds, run, n)
	})
}

// renderAlignment renders an alignment's page from the runs' stored
// results or (full) their full reports.
func renderAlignment(t *testing.T, env *testEnv, a models.Alignment, run models.Run, full bool) (web.AlignmentView, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/alignments/%d", a.ID), nil).WithContext(env.localCtx())
	c := env.e.NewContext(req, httptest.NewRecorder())
	v, err := env.h.alignmentViewWith(c, a, run, run.RubricSnapshot.Criteria[a.CriterionIndex], draftFormOf(a.Draft), nil, full)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := web.AlignmentPage(v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return v, buf.String()
}

// TestStoredAlignmentIsTheFullReportsAlignment: the split, the held-out
// count and the worst calibration disagreements (with their ids and text)
// an alignment starts from, its page (disagreements, held-out ids) and the
// held-out comparison are the same from the runs' stored results as from
// their full reports, for each criterion, several seeds and shares, with
// the imported and the browser ratings.
func TestStoredAlignmentIsTheFullReportsAlignment(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 120
		ctx := env.localCtx()
		ds, ids, run := reviewedSynthRun(t, env, n)
		before, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 1))
		if err != nil {
			t.Fatal(err)
		}
		after, err := env.db.FindRun(ctx, env.ws.ID, synthRunOn(t, env.db, env.project, ds, ids, 2))
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{"", "both", "browser"} {
			if src != "" {
				for _, r := range []models.Run{run, before} {
					if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", r.ID), url.Values{"source": {src}}); rec.Code != http.StatusSeeOther {
						t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
					}
				}
				run, before = rereadRun(t, env, run), rereadRun(t, env, before)
			}
			for _, r := range []models.Run{run, before, after} {
				if sum, err := env.h.storedResults(ctx, r, nil); err != nil || sum == nil {
					t.Fatalf("source %q: run %d's stored results would not be read (%v)", src, r.ID, err)
				}
			}
			for ci := range run.RubricSnapshot.Criteria {
				for _, split := range []struct {
					seed  int64
					share float64
				}{{1, 0.2}, {7, 0.5}, {99, 0.9}} {
					stored, err := env.h.planAlignment(ctx, run, ci, split.seed, split.share, false)
					if err != nil {
						t.Fatal(err)
					}
					full, err := env.h.planAlignment(ctx, run, ci, split.seed, split.share, true)
					if err != nil {
						t.Fatal(err)
					}
					// The stored plan counts rated samples only as far as
					// the start's checks need (alignmentPlan).
					if d := samePlan(stored, full); d != "" {
						t.Fatalf("source %q, criterion %d, split %+v: the stored plan differs from the full report's: %s", src, ci, split, d)
					}
					if len(stored.worst) != min(stored.items, align.DraftCases) || len(stored.worst) == 0 || stored.worst[0].SampleID == "" || len(stored.worst[0].Fields) == 0 {
						t.Fatalf("plan %+v: want the worst cases with their ids and text", stored)
					}
					a := models.Alignment{ID: 1, WorkspaceID: env.ws.ID, SourceRunID: run.ID, CriterionIndex: ci, Seed: split.seed,
						CalibrationRowIDs: stored.calibration, HeldOutRowIDs: stored.heldOut, BaseVersion: 1, Status: models.AlignmentDrafted,
						Draft: align.TemplateDraft(run.RubricSnapshot.Criteria[ci], stored.worst)}
					if ci == 0 {
						nv := 2
						a.Status, a.NewVersion, a.BeforeRunID, a.AfterRunID = models.AlignmentAccepted, &nv, &before.ID, &after.ID
					}
					vs, pageS := renderAlignment(t, env, a, run, false)
					vf, pageF := renderAlignment(t, env, a, run, true)
					if pageS != pageF || fmt.Sprintf("%+v", vs.Comparisons) != fmt.Sprintf("%+v", vf.Comparisons) {
						i := 0
						for i < min(len(pageS), len(pageF)) && pageS[i] == pageF[i] {
							i++
						}
						t.Fatalf("source %q, criterion %d: the alignment page differs at byte %d:\nstored: %.300s\nfull:   %.300s", src, ci, i, pageS[i:], pageF[i:])
					}
					if len(vs.HeldOutIDs) != len(stored.heldOut) || len(vs.Worst) == 0 || (ci == 0 && len(vs.Comparisons) == 0) {
						t.Fatalf("criterion %d: %d held-out ids for %d, %d disagreements, %d comparisons", ci, len(vs.HeldOutIDs), len(stored.heldOut), len(vs.Worst), len(vs.Comparisons))
					}
				}
			}
		}
		// The stored path builds no full report of any of the runs.
		for _, r := range []models.Run{run, before, after} {
			env.h.forgetReports(r.ID)
		}
		if _, err := env.h.planAlignment(ctx, run, 1, 5, 0.3, false); err != nil {
			t.Fatal(err)
		}
		a := models.Alignment{ID: 1, SourceRunID: run.ID, Seed: 5, Status: models.AlignmentAccepted, BeforeRunID: &before.ID, AfterRunID: &after.ID}
		if v, _ := renderAlignment(t, env, a, run, false); len(v.Comparisons) == 0 {
			t.Fatalf("no comparison")
		}
		env.h.reports.mu.Lock()
		defer env.h.reports.mu.Unlock()
		for _, r := range []models.Run{run, before, after} {
			if _, built := env.h.reports.items[reportKey{runID: r.ID}]; built {
				t.Errorf("the alignment built the full report of run %d", r.ID)
			}
		}
	})
}

// TestQueueAndAlignmentWaitForPreparedResults: a large finished run whose
// results are not stored yet is not built in the request (the build is
// held, so a request waiting for it would never answer): the queue says
// the results are being prepared and reloads, starting an alignment
// answers 503 with Retry-After and stores nothing, an alignment's page
// shows everything but the disagreements; once the build is done the
// queue shows its sample.
func TestQueueAndAlignmentWaitForPreparedResults(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run := unstoredFinishedRun(t, env, true)
		hb := holdBuilds(env)
		a := models.Alignment{WorkspaceID: env.ws.ID, ProjectID: run.ProjectID, RubricID: *run.RubricID, SourceRunID: run.ID, Seed: 1,
			CalibrationRowIDs: []int64{1}, HeldOutRowIDs: []int64{2}, BaseVersion: 1, DraftSource: "template"}
		if err := env.db.CreateAlignment(ctx, &a); err != nil {
			t.Fatal(err)
		}
		inTime := func(what string, send func() *httptest.ResponseRecorder) *httptest.ResponseRecorder {
			t.Helper()
			done := make(chan *httptest.ResponseRecorder, 1)
			go func() { done <- send() }()
			select {
			case rec := <-done:
				return rec
			case <-time.After(15 * time.Second):
				t.Fatalf("%s did not answer: it waits for the results' build", what)
				return nil
			}
		}
		queue := fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0", run.DatasetID, run.ID)
		rec := inTime("the queue", func() *httptest.ResponseRecorder { return env.get(queue) })
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="results-preparing"`) || !strings.Contains(body, `http-equiv="refresh"`) ||
			strings.Contains(body, `data-testid="review-sample"`) {
			t.Fatalf("queue while preparing: %d, want the preparing card and no sample:\n%.2000s", rec.Code, body)
		}
		select {
		case <-hb.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the queue started no build")
		}
		start := url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"30"}}
		rec = inTime("starting an alignment", func() *httptest.ResponseRecorder {
			return env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), start)
		})
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != strconv.Itoa(preparingRetrySeconds) ||
			!strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) {
			t.Errorf("alignment start while preparing: %d, Retry-After %q:\n%.2000s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
		}
		if as, err := env.db.ListRubricAlignments(ctx, env.ws.ID, *run.RubricID); err != nil || len(as) != 1 {
			t.Errorf("alignments while preparing: %d (%v), want only the one made by the test", len(as), err)
		}
		rec = inTime("the alignment page", func() *httptest.ResponseRecorder { return env.get(fmt.Sprintf("/alignments/%d", a.ID)) })
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) || !strings.Contains(rec.Body.String(), `data-testid="draft"`) {
			t.Errorf("alignment page while preparing: %d:\n%.2000s", rec.Code, rec.Body.String())
		}
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds, want one shared", n)
		}

		close(hb.release)
		env.h.reports.settling.Wait()
		rec = env.get(queue)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) || !strings.Contains(rec.Body.String(), `data-testid="review-sample"`) {
			t.Errorf("queue once prepared: %d:\n%.2000s", rec.Code, rec.Body.String())
		}
	})
}

// draftFromFormOld is draftFromForm as it was, reading every row of the
// split: the oracle of TestDraftFromFormReadsOnlyItsExamples.
func draftFromFormOld(h *Handlers, ctx context.Context, a models.Alignment, run models.Run, crit evaluator.Criterion, f draftForm) (align.Draft, error) {
	d := align.Draft{Levels: evaluator.Levels{Low: f.low, Middle: f.middle, High: f.high}, Notes: a.Draft.Notes}
	all := append(append([]int64{}, a.CalibrationRowIDs...), a.HeldOutRowIDs...)
	rows, err := h.DB.FindDatasetRows(ctx, run.DatasetID, all)
	if err != nil {
		return d, err
	}
	heldIDs, calIDs := idSet(a.HeldOutRowIDs), map[string]bool{}
	held := map[string]bool{}
	byExternal := map[string]models.DatasetRow{}
	for id, row := range rows {
		if heldIDs[id] {
			held[row.ExternalID] = true
		} else {
			calIDs[row.ExternalID] = true
		}
		byExternal[row.ExternalID] = row
	}
	fields := run.RubricSnapshot.Fields
	for i, ex := range f.examples {
		// Scores read as the form reads them (a decimal comma too, forms47).
		score, problem := typedDecimal(ex.Score, "2.5")
		if problem != "" {
			return d, fmt.Errorf("example %d: score %s %s", i+1, web.Quoted(ex.Score), problem)
		}
		e := evaluator.Example{SampleID: ex.SampleID, Score: score, Reason: ex.Reason}
		if row, ok := byExternal[ex.SampleID]; ok {
			e.Fields = row.Sample(fields).Fields
		}
		d.Examples = append(d.Examples, e)
	}
	if err := align.CheckExamples(crit, d.Examples, calIDs, held); err != nil {
		return d, errors.New(upperFirst(err.Error()) + ".")
	}
	return d, nil
}

// TestDraftFromFormReadsOnlyItsExamples: the accepted draft, or the reason
// it is refused, is the same when only the examples' rows are read as when
// every row of the split was: calibration examples get their text; a
// held-out, unknown, empty, repeated or out-of-range example, a score that
// is not a number and too many examples are refused with the same words.
func TestDraftFromFormReadsOnlyItsExamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := env.localCtx()
		_, _, run := reviewedSynthRun(t, env, 60)
		plan, err := env.h.planAlignment(ctx, run, 0, 4, 0.3, false)
		if err != nil {
			t.Fatal(err)
		}
		ext := func(rowID int64) string {
			row, err := env.db.FindDatasetRows(ctx, run.DatasetID, []int64{rowID})
			if err != nil {
				t.Fatal(err)
			}
			return row[rowID].ExternalID
		}
		cal0, cal1, held0 := ext(plan.calibration[0]), ext(plan.calibration[5]), ext(plan.heldOut[0])
		ex := func(id, score string) web.AlignExampleRow {
			return web.AlignExampleRow{SampleID: id, Score: score, Reason: "because"}
		}
		var many []web.AlignExampleRow
		for i := range evaluator.MaxExamples + 1 {
			many = append(many, ex(ext(plan.calibration[i]), "2"))
		}
		a := models.Alignment{SourceRunID: run.ID, CalibrationRowIDs: plan.calibration, HeldOutRowIDs: plan.heldOut, Draft: align.Draft{Notes: "notes"}}
		crit := run.RubricSnapshot.Criteria[0]
		for i, examples := range [][]web.AlignExampleRow{
			nil,
			{ex(cal0, "2"), ex(cal1, "4.5")},
			{ex(cal0, "2"), ex(held0, "3")},
			{ex("no-such-sample", "3")},
			{ex("", "3")},
			{ex(cal0, "2"), ex(cal0, "3")},
			{ex(cal0, "9")},
			{ex(cal0, "two")},
			many,
		} {
			f := draftForm{low: "low", middle: "mid", high: "high", examples: examples}
			got, gotErr := env.h.draftFromForm(ctx, a, run, crit, f)
			want, wantErr := draftFromFormOld(env.h, ctx, a, run, crit, f)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("case %d: error %v, the old one %v", i, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("case %d: draft %+v, the old one %+v", i, got, want)
			}
			if i == 1 && (gotErr != nil || len(got.Examples) != 2 || len(got.Examples[1].Fields) == 0) {
				t.Errorf("calibration examples: %+v (%v), want both with their text", got, gotErr)
			}
		}
	})
}

// TestStoredQueueReadsOnlyItsPlace: the review queue of a finished run, in
// each order, reads of the criterion's stored results the ranks of the rows
// the reviewer rated and the sample it shows, never the others (a
// million-sample run took seconds to read them all): with every other
// stored result's rounds made unreadable, each place of the queue is the
// page it was, for a reviewer with ratings and one without. Results stored
// before they were ranked by spread (00038: NULL) are ordered by spread
// from every result, as before: the same pages while the rounds are
// readable, and an error once they are not.
func TestStoredQueueReadsOnlyItsPlace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const n = 60
		ds, _, run := reviewedSynthRun(t, env, n)
		shownRow := regexp.MustCompile(`/runs/\d+/samples/(\d+)"`)
		type place struct{ q, reviewer, body string }
		var places []place
		shown := map[int64]bool{}
		for _, o := range []string{"order=disagreement", "order=uncertain", "order=random&seed=42"} {
			for _, i := range []string{"", "&i=0", "&i=5", fmt.Sprintf("&i=%d", n-1)} {
				for _, reviewer := range []string{"Ann", "Cy"} {
					q := fmt.Sprintf("run=%d&criterion=0&%s%s&blind=off", run.ID, o, i)
					code, body := renderQueue(t, env, ds, q, reviewer, false)
					m := shownRow.FindStringSubmatch(body)
					if code != http.StatusOK || m == nil {
						t.Fatalf("?%s as %s: %d, no sample shown", q, reviewer, code)
					}
					id, _ := strconv.ParseInt(m[1], 10, 64)
					shown[id] = true
					places = append(places, place{q, reviewer, body})
				}
			}
		}
		if !strings.Contains(places[0].body, `data-testid="review-rated">`) {
			t.Fatalf("the page shows no count of the reviewer's ratings")
		}
		// Results stored before 00038, then ranked again.
		type spreadRank struct {
			RowID          int64
			CriterionIndex int
			RankSpreadDesc *int
		}
		var ranks []spreadRank
		must(t, env.db.Gorm.Raw(`SELECT row_id, criterion_index, rank_spread_desc FROM run_sample_results WHERE run_id = ?`, run.ID).Scan(&ranks).Error)
		if len(ranks) != 2*n || ranks[0].RankSpreadDesc == nil {
			t.Fatalf("%d stored results, the first ranked %v: want %d, ranked", len(ranks), ranks[0].RankSpreadDesc, 2*n)
		}
		must(t, env.db.Gorm.Exec(`UPDATE run_sample_results SET rank_spread_desc = NULL WHERE run_id = ?`, run.ID).Error)
		for _, p := range places {
			if code, body := renderQueue(t, env, ds, p.q, p.reviewer, false); code != http.StatusOK || body != p.body {
				t.Errorf("?%s as %s, results not ranked by spread: the page changed (status %d)", p.q, p.reviewer, code)
			}
		}
		for _, r := range ranks {
			must(t, env.db.Gorm.Exec(`UPDATE run_sample_results SET rank_spread_desc = ? WHERE run_id = ? AND criterion_index = ? AND row_id = ?`,
				*r.RankSpreadDesc, run.ID, r.CriterionIndex, r.RowID).Error)
		}

		var keep []int64
		for id := range shown {
			keep = append(keep, id)
		}
		must(t, env.db.Gorm.Exec(`UPDATE run_sample_results SET rounds = 'unreadable' WHERE run_id = ? AND row_id NOT IN ?`, run.ID, keep).Error)
		for _, p := range places {
			if code, body := renderQueue(t, env, ds, p.q, p.reviewer, false); code != http.StatusOK || body != p.body {
				t.Errorf("?%s as %s: with the other stored results unreadable the page changed (status %d)", p.q, p.reviewer, code)
			}
		}
		must(t, env.db.Gorm.Exec(`UPDATE run_sample_results SET rank_spread_desc = NULL WHERE run_id = ?`, run.ID).Error)
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=uncertain&i=0", ds.ID, run.ID), nil).WithContext(env.localCtx())
		c := env.e.NewContext(req, httptest.NewRecorder())
		c.SetParamNames("id")
		c.SetParamValues(strconv.FormatInt(ds.ID, 10))
		if err := env.h.reviewQueue(c, false); err == nil {
			t.Errorf("the queue by spread of results not ranked by it read no unreadable rounds: it did not read every result, or the stored results were not changed")
		}
	})
}
