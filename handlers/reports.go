package handlers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// reportCacheSize bounds the finished-run reports kept in memory: enough
// for an experiment page of every method and its variants, small next to
// the rows they hold.
const reportCacheSize = 64

// cachedSampleLimit is the most samples (over all criteria) a full report
// may hold to be kept in memory: 64 reports of 20,000 samples are a few
// hundred MB at most, where one million-sample report alone is gigabytes.
// Larger reports are built for each use (experiment, compare, exports);
// the run page and the runs list read stored summaries instead.
const cachedSampleLimit = 20000

// reportCache keeps what finished runs' reports show, which no longer
// changes: their summaries (report.LoadSummary: every figure, no samples),
// read by the run page, the runs list and the derived runs, and the full
// reports of small runs, which the experiment and compare pages and the
// exports build. Running runs are always computed afresh.
type reportCache struct {
	mu    sync.Mutex
	items map[reportKey]*report.Report
	order []reportKey // oldest first
	// pairs holds paired comparisons of two finished runs' average
	// agreement (the experiment page's headline tests), which cost a few
	// hundred milliseconds each on a large dataset.
	pairs map[averagePairKey]stats.AveragedDifference
	// criterionPairs holds the compare page's per-criterion comparisons,
	// by pair and criterion.
	criterionPairs map[criterionPairKey][]stats.Difference
	// matched holds the compare page's pairing of two finished runs'
	// samples on one criterion (compare.go): a few MB at 100,000 samples,
	// so fewer are kept.
	matched map[criterionPairKey]*matchedSamples
	// heldOut holds the alignment page's before/after comparisons of an
	// alignment's two held-out runs (align.go), which cost about a minute
	// at 100,000 samples.
	heldOut map[heldOutKey]heldOutResult
	// agreements holds the alignment page's reviewers' agreement with the
	// judge (align_reviewers.go), by run, criterion and the ratings and
	// scores they are computed from: their bootstrap intervals were
	// computed at every view.
	agreements map[agreementKey]stats.Correlations
	// agree computes one reviewer's agreement; nil is report.Agreement.
	// Tests set it to count the computations.
	agree func(x, y []float64) stats.Correlations
	// compareHeldOut computes an alignment's held-out comparisons; nil is
	// heldOutComparisons. Tests set it to count or hold the computations.
	compareHeldOut func(a models.Alignment, before, after []models.SampleScore) []web.AlignComparison

	// flights shares one build of a finished run's summary among the
	// requests that need it at once (summaries.go), by run and summary
	// (report.SummaryLookup.InputKey); slots bounds the large ones built
	// in the background, failedBuilds says when the last build of a summary
	// failed.
	flights      singleflight.Group
	slots        chan struct{}
	failedBuilds map[string]time.Time
	// build builds and stores a summary; nil is report.LoadSummary. Tests
	// set it to count, hold or fail builds.
	build summaryBuilder
	// storing says whether this process's runner is storing a finished
	// run's statistics and summary (runner.Runner.StoringStats); nil asks
	// the runner. Tests set it.
	storing func(runID int64) bool
	// settling counts the summary builds requests started and have not
	// seen end, so a test can wait for the background ones.
	settling sync.WaitGroup
}

// criterionPairKey names a comparison of two finished runs on one criterion.
type criterionPairKey struct {
	pairKey
	criterion int
}

// heldOutKey names the held-out comparison of an alignment: it depends on
// the alignment's seed (the resampling draws) and on both runs' stored
// scores and human ratings (pairKey).
type heldOutKey struct {
	alignment int64
	seed      int64
	pairKey
}

// pairKey names a comparison of two finished runs as stored, with the
// human ratings they used then. A run's end alone does not name its
// scores: a cancelled run stores the answers of the calls that were out
// when it was cancelled as they arrive, after its end, so the key holds
// the answers stored too (BatchesDone).
type pairKey struct {
	a, b         int64
	aEnd, bEnd   int64 // FinishedAt in Unix nanoseconds
	aDone, bDone int   // BatchesDone
	aHum, bHum   int   // HumansVersion
	sameDatasets bool
}

// averagePairKey is a pair's average comparison over the criteria
// averaged (their indexes, written out; "" for all both runs have).
type averagePairKey struct {
	pairKey
	criteria string
}

// finishedPairKey is the pairKey of two finished runs a and b.
func finishedPairKey(a, b models.Run, sameDatasets bool) pairKey {
	return pairKey{a: a.ID, b: b.ID, aEnd: a.FinishedAt.UnixNano(), bEnd: b.FinishedAt.UnixNano(),
		aDone: a.BatchesDone, bDone: b.BatchesDone, aHum: a.HumansVersion, bHum: b.HumansVersion, sameDatasets: sameDatasets}
}

// putBounded stores v under k in a cache of comparisons, which starts
// again empty once it holds pairCacheSize of them. rc.mu must be held.
func putBounded[K comparable, V any](m map[K]V, k K, v V) {
	if len(m) >= pairCacheSize {
		clear(m)
	}
	m[k] = v
}

// noteBuild records how a background build or comparison ended: a failed
// one is not started again by every reader for a while (failedBuildPause).
func (rc *reportCache) noteBuild(flight string, err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.failedBuilds[flight] = time.Now()
	} else {
		delete(rc.failedBuilds, flight)
	}
}

// pairCacheSize bounds the cached comparisons: an experiment of a dozen
// runs needs eleven; past the bound the cache starts again empty.
const pairCacheSize = 256

type reportKey struct {
	runID  int64
	group  string
	system string
	// summary marks a summary (no samples) rather than a full report.
	summary bool
}

func newReportCache() *reportCache {
	return &reportCache{items: map[reportKey]*report.Report{}, pairs: map[averagePairKey]stats.AveragedDifference{},
		criterionPairs: map[criterionPairKey][]stats.Difference{}, matched: map[criterionPairKey]*matchedSamples{},
		heldOut: map[heldOutKey]heldOutResult{}, agreements: map[agreementKey]stats.Correlations{}, slots: make(chan struct{}, backgroundSummaryBuilds),
		failedBuilds: map[string]time.Time{}}
}

// buildReport returns the report of a run (grouped by group when set),
// from the cache when the run has finished and is unchanged since.
func (h *Handlers) buildReport(ctx context.Context, runID int64, group string) (*report.Report, error) {
	return h.buildReportWith(ctx, runID, report.Options{GroupColumn: group})
}

// buildReportWith is buildReport with every report option (the group and
// the system column).
func (h *Handlers) buildReportWith(ctx context.Context, runID int64, opt report.Options) (*report.Report, error) {
	run, err := h.DB.FindRun(ctx, workspaceOf(ctx), runID)
	if err != nil {
		return nil, err
	}
	key := reportKey{runID: runID, group: opt.GroupColumn, system: opt.SystemColumn}
	if rep, ok := h.cachedReport(key, run); ok {
		return h.withCurrentDatasetName(ctx, rep), nil
	}
	rep, err := report.BuildWith(ctx, h.DB, workspaceOf(ctx), runID, opt)
	if err != nil || !rep.Run.Finished() {
		return rep, err
	}
	n := 0
	for _, c := range rep.Criteria {
		n += len(c.Samples)
	}
	if n <= cachedSampleLimit {
		h.cacheReport(key, rep)
	}
	return rep, nil
}

// runSummary returns a run's report without samples (report.LoadSummary):
// for a finished run from the cache or its stored summary, for a running
// run computed afresh. A finished run whose summary is not stored for opt
// gets it built once for all the requests asking (finishedSummary); for a
// large run the build goes on in the background and the error is a
// *preparingError, which callers show as "being prepared".
func (h *Handlers) runSummary(ctx context.Context, runID int64, opt report.Options) (*report.Report, error) {
	run, err := h.DB.FindRun(ctx, workspaceOf(ctx), runID)
	if err != nil {
		return nil, err
	}
	key := reportKey{runID: runID, group: opt.GroupColumn, system: opt.SystemColumn, summary: true}
	if rep, ok := h.cachedReport(key, run); ok {
		return rep, nil
	}
	if run.Finished() && h.reports != nil {
		look, err := report.LookupSummary(ctx, h.DB, workspaceOf(ctx), runID, opt)
		if err != nil {
			return nil, err
		}
		if look.Stored != nil {
			h.cacheReport(key, look.Stored)
			return look.Stored, nil
		}
		if look.Run.Finished() { // not resumed since
			return h.finishedSummary(ctx, look, key, opt)
		}
	}
	rep, err := report.LoadSummary(ctx, h.DB, workspaceOf(ctx), runID, opt)
	if err != nil || !rep.Run.Finished() {
		return rep, err
	}
	h.cacheReport(key, rep)
	return rep, nil
}

// cachedReport is the cached report of key when run has finished and is
// unchanged since it was cached.
func (h *Handlers) cachedReport(key reportKey, run models.Run) (*report.Report, bool) {
	rc := h.reports
	if !run.Finished() || rc == nil {
		return nil, false
	}
	rc.mu.Lock()
	rep, ok := rc.items[key]
	rc.mu.Unlock()
	if ok && sameRun(rep.Run, run) {
		return rep, true
	}
	return nil, false
}

// withCurrentDatasetName is rep stating its dataset's name as it is now:
// a finished run's report is cached (and its summary stored) with the
// name its dataset had then, and the dataset may have been renamed since,
// through any server process. Reports that state the name (the JSON
// export, the full reports) ask; the pages that read only figures (the
// runs list, a project's runs) do not, so they read no dataset per run.
func (h *Handlers) withCurrentDatasetName(ctx context.Context, rep *report.Report) *report.Report {
	if rep == nil || rep.Dataset.ID == 0 {
		return rep
	}
	names, err := h.DB.DatasetNames(ctx, rep.Run.WorkspaceID, []int64{rep.Dataset.ID})
	if err != nil {
		return rep
	}
	if name, found := names[rep.Dataset.ID]; found && name != rep.Dataset.Name {
		renamed := *rep
		renamed.Dataset.Name = name
		return &renamed
	}
	return rep
}

// cacheReport keeps a finished run's report, dropping the oldest past
// reportCacheSize.
func (h *Handlers) cacheReport(key reportKey, rep *report.Report) {
	rc := h.reports
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.items[key]; !ok {
		rc.order = append(rc.order, key)
		if len(rc.order) > reportCacheSize {
			delete(rc.items, rc.order[0])
			rc.order = rc.order[1:]
		}
	}
	rc.items[key] = rep
}

// sameRun tells whether a cached report's run is still the stored run:
// a finished run's scores are fixed, but it can be renamed or put into an
// experiment afterwards, and the human ratings its report uses can be
// chosen again, through any server process (HumansVersion). Nor is its
// spend fixed: a call sent before the run ended that comes back after it
// adds its calls, tokens and cost to the finished run (models.AddUnitSpend,
// RunEventLateCount), which the exports and reports state; a cached report
// kept the run as it was, so they stated the old counts (fix-read30).
func sameRun(a, b models.Run) bool {
	same := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	sameCost := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Status == b.Status && a.Name == b.Name && same(a.ExperimentID, b.ExperimentID) &&
		a.FinishedAt != nil && b.FinishedAt != nil && a.FinishedAt.Equal(*b.FinishedAt) &&
		a.HumansVersion == b.HumansVersion &&
		a.Calls == b.Calls && a.PromptTokens == b.PromptTokens && a.CompletionTokens == b.CompletionTokens && sameCost(a.CostUSD, b.CostUSD) &&
		a.CachedCalls == b.CachedCalls && a.CachedPromptTokens == b.CachedPromptTokens && a.CachedCompletionTokens == b.CachedCompletionTokens &&
		a.ProbeCalls == b.ProbeCalls && a.ProbePromptTokens == b.ProbePromptTokens && a.ProbeCompletionTokens == b.ProbeCompletionTokens
}

// pairLiveSamples bounds the samples per criterion of a pair of finished
// runs whose paired tests (a paired permutation test and bootstrap of
// 1,000 draws each, on every sample) a request computes while the reader
// waits: a second or more at 1,000 samples on a loaded two-core machine,
// minutes at 100,000 (Kendall's tau is recomputed on every draw). Larger
// pairs are computed once in the background, like large summaries
// (summaries.go), and the page says they are being computed meanwhile:
// the experiment page's headline, the compare page's agreement and the
// alignment page's held-out comparison (align.go).
// Handlers.pairLiveSamples replaces it when above 0, so tests can take
// the background path with small runs.
const pairLiveSamples = 2000

// pairLive is pairLiveSamples, or the test's bound.
func (h *Handlers) pairLive() int {
	if h.pairLiveSamples > 0 {
		return h.pairLiveSamples
	}
	return pairLiveSamples
}

// errPairPending says that a paired comparison is being computed in the
// background; the page shows everything else and reloads.
var errPairPending = errors.New("the paired comparison is being computed")

// errPairRetried is errPairPending when the previous attempt at the same
// comparison failed (its error is in the server log): the page says so,
// rather than showing "being computed" as if nothing had happened.
var errPairRetried = fmt.Errorf("%w again: the previous attempt failed", errPairPending)

// pairPending is the error of a comparison left to the background:
// errPairRetried when its previous attempt failed.
func pairPending(lastFailed bool) error {
	if lastFailed {
		return errPairRetried
	}
	return errPairPending
}

// compareAverage is report.CompareAverage of two runs (over the criteria
// given, all both have when nil), from the cache when
// both runs have finished (keyed by the answers stored: pairKey); otherwise on
// their per-sample scores read through scores. For a pair of large
// finished runs not yet in the cache the comparison is started in the
// background and the error is errPairPending.
func (h *Handlers) compareAverage(scores *pairedScores, a, b runFigures, criteria []int) (stats.AveragedDifference, error) {
	same := a.run.DatasetID == b.run.DatasetID
	rc := h.reports
	cacheable := rc != nil && a.run.Finished() && b.run.Finished() && a.run.FinishedAt != nil && b.run.FinishedAt != nil
	var key averagePairKey
	if cacheable {
		key = averagePairKey{finishedPairKey(a.run, b.run, same), fmt.Sprint(criteria)}
		if criteria == nil {
			key.criteria = ""
		}
		rc.mu.Lock()
		d, ok := rc.pairs[key]
		rc.mu.Unlock()
		if ok {
			return d, nil
		}
	}
	compute := func(scores *pairedScores) (stats.AveragedDifference, error) {
		repA, err := scores.of(a.run, a.rep, !same)
		if err != nil {
			return stats.AveragedDifference{}, err
		}
		repB, err := scores.of(b.run, b.rep, !same)
		if err != nil {
			return stats.AveragedDifference{}, err
		}
		d := report.CompareAverage(repA, repB, same, criteria...)
		if cacheable {
			rc.mu.Lock()
			putBounded(rc.pairs, key, d)
			rc.mu.Unlock()
		}
		return d, nil
	}
	if cacheable && max(a.rows, b.rows) > h.pairLive() {
		flight := fmt.Sprintf("pair\x00%+v", key)
		failed := h.pairInBackground(scores.ctx, flight, func(ctx context.Context) error {
			_, err := compute(h.pairedScores(ctx))
			return err
		})
		return stats.AveragedDifference{}, pairPending(failed)
	}
	return compute(scores)
}

// compareCriterion is report.CompareCriterion of two runs, from the cache
// when both runs have finished; otherwise computed by pair, which gives
// the two runs' reports with their samples (aligned so the criterion has
// the same index in both) and reads with the context it is given. For a
// pair of finished runs of more than pairLiveSamples samples it is
// computed in the background and the error is errPairPending.
func (h *Handlers) compareCriterion(ctx context.Context, a, b models.Run, samples, criterion int, sameDataset bool, pair func(ctx context.Context) (repA, repB *report.Report, err error)) ([]stats.Difference, error) {
	rc := h.reports
	cacheable := rc != nil && a.Finished() && b.Finished() && a.FinishedAt != nil && b.FinishedAt != nil
	var key criterionPairKey
	if cacheable {
		key = criterionPairKey{finishedPairKey(a, b, sameDataset), criterion}
		rc.mu.Lock()
		d, ok := rc.criterionPairs[key]
		rc.mu.Unlock()
		if ok {
			return d, nil
		}
	}
	compute := func(ctx context.Context) ([]stats.Difference, error) {
		repA, repB, err := pair(ctx)
		if err != nil {
			return nil, err
		}
		d := report.CompareCriterion(repA, repB, criterion, sameDataset)
		if cacheable {
			rc.mu.Lock()
			putBounded(rc.criterionPairs, key, d)
			rc.mu.Unlock()
		}
		return d, nil
	}
	if cacheable && samples > h.pairLive() {
		flight := fmt.Sprintf("criterion\x00%+v", key)
		// The request ends before the computation does: it reads with the
		// background's context, not the request's.
		failed := h.pairInBackground(ctx, flight, func(ctx context.Context) error {
			_, err := compute(ctx)
			return err
		})
		return nil, pairPending(failed)
	}
	return compute(ctx)
}

// pairInBackground runs compute (which caches its result) once per flight
// and process, detached from the request and in one of the background
// slots summaries use (sharedBuild, as summaries are built). A failure is
// logged, and not retried by the
// readers of the next failedBuildPause. It reports whether the previous
// attempt failed (read before this one starts, which may end and clear the
// mark before the page is drawn), for the page to say so.
func (h *Handlers) pairInBackground(ctx context.Context, flight string, compute func(ctx context.Context) error) (lastFailed bool) {
	b := h.sharedBuildOf(flight, "a paired comparison")
	if b.paused() {
		return true
	}
	b.inBackground(ctx, func(ctx context.Context) (any, error) {
		if err := compute(ctx); err != nil {
			h.Log.Error("a paired comparison failed; the next reader tries again", "pair", flight, "err", err)
			return nil, err
		}
		return nil, nil
	})
	return b.failed
}

// pairedScores reads, once per request and run, what pairing a run's
// samples with another run's needs (scoresReport).
type pairedScores struct {
	h    *Handlers
	ctx  context.Context
	runs map[pairedScoresKey]*report.Report
}

type pairedScoresKey struct {
	run         int64
	externalIDs bool
}

func (h *Handlers) pairedScores(ctx context.Context) *pairedScores {
	return &pairedScores{h: h, ctx: ctx, runs: map[pairedScoresKey]*report.Report{}}
}

// of is scoresReport of run (whose summary is sum) on every criterion,
// read once per request.
func (p *pairedScores) of(run models.Run, sum *report.Report, externalIDs bool) (*report.Report, error) {
	k := pairedScoresKey{run.ID, externalIDs}
	if rep, ok := p.runs[k]; ok {
		return rep, nil
	}
	rep, err := p.h.scoresReport(p.ctx, run, sum, externalIDs)
	if err != nil {
		return nil, err
	}
	p.runs[k] = rep
	return rep, nil
}

// scoresReport is a run's report with the samples that paired comparisons
// read (final scores, human ratings, rows and, with externalIDs, the
// samples' ids), on the given criteria (all when none is given). For a
// finished run it is the run's summary sum (runSummary) with those read
// from its stored per-sample results (report.WithStoredScores): no scores,
// batches or text are read, and the figures computed on it are those of
// the full report. A run still going, or whose stored results are not its
// current ones (a change of human source racing this request), gets its
// full report built, as before summaries were stored.
func (h *Handlers) scoresReport(ctx context.Context, run models.Run, sum *report.Report, externalIDs bool, criteria ...int) (*report.Report, error) {
	if sum == nil || !run.Finished() || !sum.Run.Finished() || !sameRun(sum.Run, run) {
		return h.buildReport(ctx, run.ID, "")
	}
	rep, err := report.WithStoredScores(ctx, h.DB, sum, externalIDs, criteria...)
	if errors.Is(err, report.ErrSamplesNotStored) {
		return h.buildReport(ctx, run.ID, "")
	}
	return rep, err
}
