package handlers

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

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
// longer (liveFigures.sweep), whether or not it computes. A 100,000-row
// run's figures hold every sample, so they must not outlive their viewers.
const liveFiguresIdle = 2 * time.Minute

// liveFiguresMax bounds the figures kept at once (runs, groups and system
// columns, human-ratings choices): past it the least recently viewed are
// dropped.
const liveFiguresMax = 16

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
	// now is the clock; nil is time.Now (tests move it).
	now func() time.Time
}

func (lf *liveFigures) clock() time.Time {
	if lf.now != nil {
		return lf.now()
	}
	return time.Now()
}

// liveFiguresKey names one variant of a run's figures. HumansVersion
// counts the choices of the run's human ratings, which fix the ratings
// its figures read (their cut-off).
type liveFiguresKey struct {
	ws, run       int64
	group, system string
	humansVersion int
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
	ready   chan struct{}
	started time.Time
	// seen is when a view last asked for it (under liveFigures.mu).
	seen     time.Time
	took     time.Duration
	progress liveProgress
	rep      *report.Report
	err      error
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

// liveReport is the figures of run, under way, as report.BuildFigures
// computes them with opt (the entry's rep): shared with every other view of the run that
// asks for the same variant while they are fresh (liveFiguresEntry.fresh).
// The report is shared: callers must not change it (they copy what they
// change). Its Run is the run as read when the figures were computed, so
// the page can say how far the run was then.
func (h *Handlers) liveReport(ctx context.Context, run models.Run, opt report.Options) (*liveFiguresEntry, error) {
	lf := &h.live
	key := liveFiguresKey{ws: workspaceOf(ctx), run: run.ID, group: opt.GroupColumn, system: opt.SystemColumn, humansVersion: run.HumansVersion}
	now := lf.clock()
	lf.mu.Lock()
	lf.sweep(now)
	e := lf.entries[key]
	if e == nil || lf.perView || !e.fresh(progressOf(run), now) {
		e = &liveFiguresEntry{ready: make(chan struct{}), started: now, progress: progressOf(run)}
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
		go func(ctx context.Context) {
			defer close(e.ready)
			e.rep, e.err = build(ctx, h.DB, key.ws, key.run, opt)
			e.took = lf.clock().Sub(e.started)
			if e.err == nil {
				e.progress = progressOf(e.rep.Run)
			}
		}(context.WithoutCancel(ctx))
	}
	e.seen = now
	lf.mu.Unlock()
	select {
	case <-e.ready:
		if e.err != nil {
			return nil, e.err
		}
		return e, nil
	case <-ctx.Done():
		return nil, ctx.Err()
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
	for k, e := range lf.entries {
		if now.Sub(e.seen) > liveFiguresIdle {
			delete(lf.entries, k)
		}
	}
}

// bound drops the least recently viewed figures, other than keep's, while
// more than liveFiguresMax are kept (lf.mu held).
func (lf *liveFigures) bound(keep liveFiguresKey) {
	for len(lf.entries) > liveFiguresMax {
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
