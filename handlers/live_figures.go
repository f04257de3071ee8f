package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// liveFiguresEvery is the least time between two computations of a
// running run's figures (for one choice of group and system column):
// within it every view, and every live refresh, of the run's page and of
// its review queue reads the figures last computed, which say how many
// samples and batches they are over. A computation that took longer
// waits liveFiguresSlowFactor times its own time before the next.
const (
	liveFiguresEvery      = 3 * time.Second
	liveFiguresSlowFactor = 4
)

// liveFiguresIdle is how long the figures of a run nobody looks at are
// kept: any view of a running run's figures drops those not viewed for
// longer (liveFigures.sweep), whether or not it computes, and so does the
// server's janitor (RunLiveFiguresJanitor) when nobody views any. A
// 100,000-row run's figures hold every sample, so they must not outlive
// their viewers.
const liveFiguresIdle = 2 * time.Minute

// LiveFiguresSweepEvery is how often the janitor looks for idle figures:
// a quarter of liveFiguresIdle, so figures nobody views go at most
// 2.5 minutes after the last view, at the cost of one map walk under a
// lock every 30 s.
const LiveFiguresSweepEvery = liveFiguresIdle / 4

// liveFiguresWait bounds how long a view waits for a computation of the
// figures: past it, the view shows the figures computed before (labelled
// with when and over what), or, for a run with none computed yet, says
// they are being computed and reloads. A run of a few thousand samples
// computes well within it, so its viewers see figures as of the view; a
// run of 100,000 takes seconds per computation on two cores
// (BENCHMARKS.md), which no view waits for. When the last computation
// took longer than this, a view does not wait at all.
const liveFiguresWait = 500 * time.Millisecond

// liveFiguresMax bounds the figures kept at once (runs, groups and system
// columns, human-ratings choices): past it the least recently viewed are
// dropped.
const liveFiguresMax = 16

// liveFiguresKeptSamples bounds the samples of the figures kept at once,
// the last ones shown while newer are computed included: past it the
// least recently viewed go, as past liveFiguresMax. Sixteen variants of
// a million-sample run would otherwise hold sixteen reports of that size;
// this keeps the largest run's figures and one more of its size.
const liveFiguresKeptSamples = 2 * liveFiguresMaxSamples

// liveFigures shares the figures of runs under way (report.BuildFigures)
// among their viewers: one computation per run, group and system column
// and progress step (or per liveFiguresEvery, whichever is rarer), not one
// per view. The zero value is ready.
type liveFigures struct {
	mu      sync.Mutex
	entries map[liveFiguresKey]*liveFiguresEntry
	// builds counts the computations started (tests count them).
	builds atomic.Int64
	// build computes; nil is report.BuildFigures. Tests set it to hold a
	// computation.
	build func(ctx context.Context, db *models.DB, wsID, runID int64, opt report.Options) (*report.Report, error)
	// perView computes for every view, as before the figures were
	// shared (benchmarks compare the two).
	perView bool
	// readEveryRating makes a running run's page read every current
	// browser rating at each view, for its human-ratings box and its
	// figures' key (reviewersKey), as before liveratings49 (benchmarks
	// and tests compare the two).
	readEveryRating bool
	// now is the clock; nil is time.Now (tests move it).
	now func() time.Time
	// wait bounds a view's wait for a computation; 0 is liveFiguresWait.
	wait time.Duration
	// idle is how long figures nobody views are kept; 0 is
	// liveFiguresIdle.
	idle time.Duration
	// keptSamples bounds the samples of the figures kept; 0 is
	// liveFiguresKeptSamples.
	keptSamples int
	// computing bounds the samples of the computations under way at
	// once, over every run and variant (computingSamplesBound); made on
	// first use, under mu.
	computing *semaphore.Weighted
	// computingSamples is that bound; 0 is liveFiguresMaxSamples.
	computingSamples int
}

// computingSamplesBound is the most samples computed at once. One
// computation of a million samples peaks near 850 MiB (BENCHMARKS.md,
// "livebig44"; 460-525 MiB since "livemem45", 460 since "livemem45b"), and each running run, group and system column has its
// own: without a bound, two large runs viewed at once would hold twice
// that. Past it a computation waits for others to end; its viewers are
// shown the last figures, or "computing", meanwhile, as for any slow
// computation.
func (lf *liveFigures) computingSamplesBound() int {
	if lf.computingSamples > 0 {
		return lf.computingSamples
	}
	return liveFiguresMaxSamples
}

// computingSlot waits until a computation of about samples samples may
// start, and gives what ends it. Its weight is samples within [1, the
// bound]: a computation larger than the bound runs alone.
func (lf *liveFigures) computingSlot(samples int) (release func()) {
	lf.mu.Lock()
	if lf.computing == nil {
		lf.computing = semaphore.NewWeighted(int64(lf.computingSamplesBound()))
	}
	sem := lf.computing
	lf.mu.Unlock()
	w := int64(min(max(samples, 1), lf.computingSamplesBound()))
	// Never fails: the context is never cancelled.
	_ = sem.Acquire(context.Background(), w)
	return func() { sem.Release(w) }
}

// samplesEstimate is how many samples a computation of run's figures
// will hold: the last computation's when there was one, else its
// dataset's rows times its criteria (1 when they cannot be read: the
// computation reads them itself and says what went wrong).
func (h *Handlers) liveSamplesEstimate(ctx context.Context, ws int64, run models.Run, last int) int {
	if last > 0 || h.DB == nil {
		return last
	}
	d, err := h.DB.FindDataset(ctx, ws, run.DatasetID)
	if err != nil {
		return 1
	}
	return d.RowCount * max(1, len(run.RubricSnapshot.Criteria))
}

func (lf *liveFigures) keptSamplesBound() int {
	if lf.keptSamples > 0 {
		return lf.keptSamples
	}
	return liveFiguresKeptSamples
}

func (lf *liveFigures) waitBound() time.Duration {
	if lf.wait > 0 {
		return lf.wait
	}
	return liveFiguresWait
}

func (lf *liveFigures) idleFor() time.Duration {
	if lf.idle > 0 {
		return lf.idle
	}
	return liveFiguresIdle
}

func (lf *liveFigures) clock() time.Time {
	if lf.now != nil {
		return lf.now()
	}
	return time.Now()
}

// liveFiguresKey names one variant of a run's figures. HumansVersion
// counts the choices of the run's human ratings, which fix the ratings
// its figures read (their cut-off). Ratings names the browser ratings
// they read, as they name their reviewers (liveRatingsKey): an account
// renamed while the run stands still (paused) is another variant, not the
// figures that named it by its old name.
type liveFiguresKey struct {
	ws, run       int64
	group, system string
	humansVersion int
	ratings       string
}

// liveRatingsKey is the liveFiguresKey.Ratings of a view of run whose
// reviews are pre: "" when none are read (nil: the imported ratings, or a
// caller whose computation reads its own), otherwise the key of the
// ratings the run's reports read (report.RatingsKey: every rating up to
// the cut-off with its reviewer's names), which the run's stored ratings
// proof gives without reading them while nothing they depend on changed.
// A view of a running run so reads its ratings only when they changed, and
// its shared figures are computed again exactly then; each view read
// every current rating for reviewersKey before (liveratings49).
// readEveryRating keeps that old key, for the benchmarks' and tests' old
// path.
func (h *Handlers) liveRatingsKey(ctx context.Context, run models.Run, pre *report.BrowserReviews) (string, error) {
	if pre == nil {
		return "", nil
	}
	if h.live.readEveryRating {
		return reviewersKey(pre), nil
	}
	return report.RatingsKey(ctx, h.DB, run, pre)
}

// reviewersKey identifies the reviewers of pre as the figures name them:
// each one's identity (models.ReviewerKeyOf) with the name the figures
// give (AnnotatorName) and the name the reviews are keyed by (Reviewer),
// over the ratings that count and those excluded; "" when none were
// read. A hash, so the key stays small however many rated.
func reviewersKey(pre *report.BrowserReviews) string {
	if pre == nil {
		return ""
	}
	seen := map[string]bool{}
	add := func(byName map[string][]models.ReviewRating) {
		for _, rs := range byName {
			for _, r := range rs {
				who, as := r.ReviewerKey(), r.AnnotatorName()
				seen[strconv.Itoa(len(who))+":"+who+strconv.Itoa(len(as))+":"+as+strconv.Itoa(len(r.Reviewer))+":"+r.Reviewer] = true
			}
		}
	}
	add(pre.ByName)
	add(pre.Excluded)
	if len(seen) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(seen))
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// liveProgress is how far a run had got: its figures change when it does.
type liveProgress struct {
	status       string
	done, failed int
}

func progressOf(run models.Run) liveProgress {
	return liveProgress{status: run.Status, done: run.BatchesDone, failed: run.BatchesFailed}
}

// liveFiguresEntry is one computation, in flight until ready is closed.
type liveFiguresEntry struct {
	ready chan struct{}
	// prev is the variant's last figures computed without error when
	// this computation started: views that cannot wait for this one are
	// shown those (stale-while-revalidate). Dropped once this one is
	// ready without error (under liveFigures.mu).
	prev    *liveFiguresEntry
	started time.Time
	// seen is when a view last asked for it (under liveFigures.mu).
	seen     time.Time
	took     time.Duration
	progress liveProgress
	rep      *report.Report
	err      error
	// samples are rep's, over its criteria, once computed (under
	// liveFigures.mu).
	samples int
	// memos are what views derive from rep alike (a review queue's
	// order), derived once (liveFigures.memo).
	memoMu sync.Mutex
	memos  map[any]any
}

// fresh tells whether the entry serves a view of a run at progress p at
// now: it is being computed, or it was computed at that progress, or too
// recently to compute again.
func (e *liveFiguresEntry) fresh(p liveProgress, now time.Time) bool {
	select {
	case <-e.ready:
	default:
		return true // in flight: share it
	}
	if e.err != nil {
		return false
	}
	return e.progress == p || now.Sub(e.started) < max(liveFiguresEvery, liveFiguresSlowFactor*e.took)
}

// liveReport is liveFiguresFor without saying whether the figures are
// the last ones rather than the run's as of now.
func (h *Handlers) liveReport(ctx context.Context, run models.Run, opt report.Options) (*liveFiguresEntry, error) {
	e, _, err := h.liveFiguresFor(ctx, run, opt)
	return e, err
}

// liveFiguresFor is the figures of run, under way, as
// report.BuildFigures computes them with opt (the entry's rep): shared
// with every other view of the run that asks for the same variant while
// they are fresh (liveFiguresEntry.fresh). When they are not, one
// computation starts for everyone, and a view waits for it at most
// liveFigures.waitBound: past that it is given the figures computed
// before, with stale set (their note says when and over what they were
// computed), or, when there are none yet, a *preparingError (live) that
// the pages show as "computing provisional figures". The computation goes
// on in the background and the next view reads it.
//
// The report is shared: callers must not change it (they copy what they
// change). Its Run is the run as read when the figures were computed, so
// the page can say how far the run was then.
func (h *Handlers) liveFiguresFor(ctx context.Context, run models.Run, opt report.Options) (e *liveFiguresEntry, stale bool, err error) {
	lf := &h.live
	ratings, err := h.liveRatingsKey(ctx, run, opt.Reviews)
	if err != nil {
		return nil, false, err
	}
	key := liveFiguresKey{ws: workspaceOf(ctx), run: run.ID, group: opt.GroupColumn, system: opt.SystemColumn, humansVersion: run.HumansVersion,
		ratings: ratings}
	now := lf.clock()
	lf.mu.Lock()
	lf.sweep(now)
	e = lf.entries[key]
	if e == nil || lf.perView || !e.fresh(progressOf(run), now) {
		next := &liveFiguresEntry{ready: make(chan struct{}), started: now, progress: progressOf(run)}
		if e != nil && !lf.perView {
			// The figures to show while these are computed: the last
			// computed without error.
			if e.done() && e.err == nil {
				next.prev = e
			} else {
				next.prev = e.prev
			}
		}
		e = next
		if lf.entries == nil {
			lf.entries = map[liveFiguresKey]*liveFiguresEntry{}
		}
		lf.entries[key] = e
		lf.bound(key)
		lf.builds.Add(1)
		build := lf.build
		if build == nil {
			build = report.BuildFigures
		}
		// The computation is everyone's: a viewer who leaves does not
		// cancel it for the others.
		last := 0
		if next.prev != nil {
			last = next.prev.samples
		}
		go func(ctx context.Context, e *liveFiguresEntry) {
			release := lf.computingSlot(h.liveSamplesEstimate(ctx, key.ws, run, last))
			rep, err := build(ctx, h.DB, key.ws, key.run, opt)
			release()
			took := lf.clock().Sub(e.started)
			lf.mu.Lock()
			e.rep, e.err, e.took = rep, err, took
			if err == nil {
				e.progress = progressOf(rep.Run)
				e.prev = nil // shown no more: these are newer
				for _, c := range rep.Criteria {
					e.samples += len(c.Samples)
				}
				// Their size is known now: past the bound, others go.
				lf.bound(key)
			}
			lf.mu.Unlock()
			close(e.ready)
		}(context.WithoutCancel(ctx), e)
	}
	e.seen = now
	prev := e.prev
	lf.mu.Unlock()
	var bound <-chan time.Time
	if !lf.perView {
		// Before the figures were shared every view computed them; the
		// benchmarks' old path waits as it did.
		wait := lf.waitBound()
		if prev != nil && prev.took >= wait {
			// The last computation took longer than a view may wait:
			// this one will too, so the last figures are shown at once.
			wait = 0
			select {
			case <-e.ready:
			default:
				return prev, true, nil
			}
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		bound = t.C
	}
	select {
	case <-e.ready:
		if e.err != nil {
			return nil, false, e.err
		}
		return e, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case <-bound:
		if prev != nil {
			return prev, true, nil
		}
		return nil, false, &preparingError{runID: run.ID, live: true, done: run.BatchesDone, total: run.BatchesTotal, retry: int(liveFiguresEvery / time.Second)}
	}
}

// done tells whether the entry's computation has ended.
func (e *liveFiguresEntry) done() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// memo is what compute derives from the entry's report, derived once
// per computation under k; a nil entry (a report not shared) derives it
// at each call.
func (e *liveFiguresEntry) memo(k any, compute func() any) any {
	if e == nil {
		return compute()
	}
	e.memoMu.Lock()
	defer e.memoMu.Unlock()
	if v, ok := e.memos[k]; ok {
		return v
	}
	v := compute()
	if e.memos == nil {
		e.memos = map[any]any{}
	}
	e.memos[k] = v
	return v
}

// liveNoteKey names the provisional note of a shared report.
type liveNoteKey struct{}

// note says over what the entry's figures were computed
// (web.LiveFigures), counted once per computation.
func (e *liveFiguresEntry) note() *web.LiveFigures {
	rep := e.rep
	return e.memo(liveNoteKey{}, func() any {
		n := &web.LiveFigures{At: e.started, Done: rep.Run.BatchesDone, Total: rep.Run.BatchesTotal, EverySeconds: int(liveFiguresEvery / time.Second)}
		rounds := max(1, rep.Run.Settings.Rounds)
		for _, c := range rep.Criteria {
			lc := web.LiveCriterion{Name: c.Criterion.Name, Samples: len(c.Samples)}
			for _, s := range c.Samples {
				if s.Final != nil {
					lc.Scored++
				}
			}
			// A round not judged yet is neither scored nor missing.
			lc.Finished = lc.Samples > 0 && c.Scored+c.Missing >= lc.Samples*rounds
			n.Criteria = append(n.Criteria, lc)
		}
		return n
	}).(*web.LiveFigures)
}

// sweep drops the figures nobody viewed for liveFiguresIdle (lf.mu held).
// A computation in flight is dropped too: its viewers keep it until it is
// ready, and the map does not keep it after them.
func (lf *liveFigures) sweep(now time.Time) {
	idle := lf.idleFor()
	for k, e := range lf.entries {
		if now.Sub(e.seen) > idle {
			delete(lf.entries, k)
		}
	}
}

// RunLiveFiguresJanitor drops, every every (LiveFiguresSweepEvery when
// not positive) until ctx ends, the running runs' figures nobody viewed
// for liveFiguresIdle, so that they go when their viewers do and not at
// the next view of some running run. The server runs it for as long as it
// serves and stops it on shutdown (it returns once ctx is done).
func (h *Handlers) RunLiveFiguresJanitor(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = LiveFiguresSweepEvery
	}
	lf := &h.live
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			lf.mu.Lock()
			lf.sweep(lf.clock())
			lf.mu.Unlock()
		}
	}
}

// held is the samples of the figures e keeps: its own and the last ones
// shown while it is computed (lf.mu held).
func (e *liveFiguresEntry) held() int {
	n := e.samples
	if e.prev != nil {
		n += e.prev.samples
	}
	return n
}

// bound drops the least recently viewed figures, other than keep's, while
// more than liveFiguresMax are kept or they hold more than
// liveFigures.keptSamplesBound samples (lf.mu held).
func (lf *liveFigures) bound(keep liveFiguresKey) {
	over := func() bool {
		if len(lf.entries) > liveFiguresMax {
			return true
		}
		n := 0
		for _, e := range lf.entries {
			n += e.held()
		}
		return n > lf.keptSamplesBound()
	}
	for over() {
		var oldest liveFiguresKey
		var at time.Time
		found := false
		for k, e := range lf.entries {
			if k != keep && (!found || e.seen.Before(at)) {
				oldest, at, found = k, e.seen, true
			}
		}
		if !found {
			return
		}
		delete(lf.entries, oldest)
	}
}

// forget drops the shared figures of a run whose human ratings changed,
// or that ended (its pages read its stored figures): the next view of it
// running computes them again.
func (lf *liveFigures) forget(runID int64) {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	for k := range lf.entries {
		if k.run == runID {
			delete(lf.entries, k)
		}
	}
}
