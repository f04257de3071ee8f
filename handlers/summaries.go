package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// Finished runs' summaries built by a reader. The runner stores a run's
// summary when it finishes (report.StoreStats); a reader still finds none
// in the seconds before that, when the worker died between finishing the
// run and storing it, or when the summary's inputs changed (another human
// source, other options). Then the first reader builds it, once per
// process and summary: concurrent readers share one build. A small run's
// build takes well under a second and the request waits for it; a large
// run's (8.7 s at 100,000 samples on SQLite, 20.7 s on PostgreSQL) runs in
// the background and the request answers at once that the results are
// being prepared.
//
// While the runner of the same process is storing a large run's summary,
// readers wait for it (runnerStoring) instead of building it beside it.
// If the runner is storing the same summary in another process at the
// same time, both store it: the two writes hold the same figures from the
// same inputs (report.LoadSummary's store is idempotent), so whichever
// lands last is as good as the other.

// preparingRetrySeconds is how long a reader is asked to wait before
// asking again for results being prepared (Retry-After, and the run page's
// reload): a large summary takes several seconds to a minute, and a reload
// costs a page without results.
const preparingRetrySeconds = 5

// backgroundSummaryBuilds bounds the large summaries built at once: each
// reads every score of its run and holds its whole report in memory, so a
// runs list of several large finished runs builds them two at a time
// rather than all together on a small server.
const backgroundSummaryBuilds = 2

// failedBuildPause is how long after a failed background build readers
// wait before one starts it again (a variable so tests can shorten it).
var failedBuildPause = 30 * time.Second

// summaryBuilder is a function that builds and stores a finished run's
// summary: report.LoadSummary, or a test's stand-in.
type summaryBuilder func(ctx context.Context, db *models.DB, wsID, runID int64, opt report.Options) (*report.Report, error)

// preparingError says that a finished run's summary is being built in the
// background: the run page shows a "Preparing results" card, exports and
// the API answer 503 with Retry-After.
type preparingError struct {
	runID   int64
	samples int
	// lastFailed is set when the previous build of this summary failed
	// (it was logged); this request started it again.
	lastFailed bool
	// otherRunID is set when what is prepared is the pairing of runID's
	// samples with this run's (a comparison of two large runs), not a
	// run's figures.
	otherRunID int64
	// retry is the seconds to wait before asking again;
	// 0 is preparingRetrySeconds.
	retry int
	// live is set when what is computed is a running run's provisional
	// figures (liveFiguresFor), its first computation, when done of its
	// total batches were back.
	live        bool
	done, total int
}

func (e *preparingError) Error() string {
	if e.live {
		return fmt.Sprintf("the provisional figures of run %d (%s of %s batches back) are being computed now; try again in %d seconds",
			e.runID, web.Count(e.done), web.Count(e.total), e.retrySeconds())
	}
	if e.otherRunID != 0 {
		return fmt.Sprintf("the comparison of runs %d and %d (%s samples) is being computed now; try again in %d seconds",
			e.runID, e.otherRunID, web.Count(e.samples), e.retrySeconds())
	}
	return fmt.Sprintf("the results of run %d (%s samples) are being computed now; try again in %d seconds",
		e.runID, web.Count(e.samples), e.retrySeconds())
}

// retrySeconds is how soon to ask again.
func (e *preparingError) retrySeconds() int {
	if e.retry > 0 {
		return e.retry
	}
	return preparingRetrySeconds
}

// preparingOf is the preparingError in err's chain, or nil.
func preparingOf(err error) *preparingError {
	var p *preparingError
	if errors.As(err, &p) {
		return p
	}
	return nil
}

// finishedSummary returns a finished run's summary for opt: the stored one
// when current, otherwise built by one shared build per process and
// summary. A run of more samples than liveReportSamples is not waited for:
// its build starts in the background (or is already under way) and a
// *preparingError is returned. rc must not be nil.
func (h *Handlers) finishedSummary(ctx context.Context, look report.SummaryLookup, cacheKey reportKey, opt report.Options) (*report.Report, error) {
	flight := strconv.FormatInt(look.Run.ID, 10) + "\x00" + look.InputKey
	large := look.Samples > liveReportSamples
	run := look.Run
	b := h.sharedBuildOf(flight, fmt.Sprintf("building the summary of run %d", run.ID))
	if large && b.paused() {
		// A build that failed is not started again at every reload of
		// the page.
		return nil, &preparingError{runID: run.ID, samples: look.Samples, lastFailed: true}
	}
	if large && h.runnerStoring(run.ID) {
		// The runner of this process is computing the same run's figures
		// right after its end (a browser left on the run page reloads as
		// it ends): a second build beside it would hold as much memory
		// again (at a million samples, 2.3 GB became 3.6). The page
		// reloads until they are stored; a summary of other options than
		// the runner's is built on a reload after that.
		return nil, &preparingError{runID: run.ID, samples: look.Samples, lastFailed: b.failed}
	}
	build := func(ctx context.Context) (any, error) { return h.buildSummary(ctx, run, cacheKey, opt, large) }
	if large {
		b.inBackground(ctx, build)
		return nil, &preparingError{runID: run.ID, samples: look.Samples, lastFailed: b.failed}
	}
	rep, err := b.await(ctx, build)
	if err != nil {
		return nil, err
	}
	return rep.(*report.Report), nil
}

// runnerStoring says whether this process's runner is storing run runID's
// statistics and summary now.
func (h *Handlers) runnerStoring(runID int64) bool {
	if f := h.reports.storing; f != nil {
		return f(runID)
	}
	return h.Runner.StoringStats(runID)
}

// buildSummary builds and stores one summary (the work of a shared build,
// sharedBuild): a large build's failure, which no request sees, is logged;
// the built summary is kept in the report cache.
func (h *Handlers) buildSummary(ctx context.Context, run models.Run, cacheKey reportKey, opt report.Options, large bool) (*report.Report, error) {
	build := h.reports.build
	if build == nil {
		build = report.LoadSummary
	}
	rep, err := build(ctx, h.DB, run.WorkspaceID, run.ID, opt)
	if err != nil {
		if large {
			h.Log.Error("building a finished run's summary failed; the next reader tries again", "run", run.ID, "err", err)
		}
		return nil, fmt.Errorf("build the summary of run %d: %w", run.ID, err)
	}
	if rep.Run.Finished() {
		h.cacheReport(cacheKey, rep)
	}
	return rep, nil
}

// answerPreparing answers a request whose run's results are being prepared:
// 503 with Retry-After and the API's error body, unless something was
// already sent (then err goes to the error handler as it is).
func answerPreparing(c echo.Context, err error) error {
	p := preparingOf(err)
	if p == nil || c.Response().Committed {
		return err
	}
	hdr := c.Response().Header()
	hdr.Del(echo.HeaderContentDisposition) // not a download: an error
	hdr.Set("Retry-After", strconv.Itoa(p.retrySeconds()))
	hdr.Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusServiceUnavailable, APIError{Error: APIErrorBody{Code: "preparing", Message: p.Error()}})
}

// preparingView is the run page's "Preparing results" card of p.
func preparingView(p *preparingError) *web.ResultsPreparing {
	return &web.ResultsPreparing{Samples: p.samples, RefreshSeconds: p.retrySeconds(), LastFailed: p.lastFailed, Pairing: p.otherRunID != 0,
		Live: p.live, Done: p.done, Total: p.total}
}
