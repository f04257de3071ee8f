package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// The review queue and the alignment need, of one criterion of a run,
// every sample's final score and human rating (the queue also the
// difference and the round scores) and the text of the few samples they
// show. For a finished run these are read from the run's stored
// per-sample results (run_sample_results) and the shown rows alone, not
// from its full report, which reads every batch, score and dataset row and
// computes every statistic (a minute and gigabytes at 100,000 samples).
// A run still going has nothing stored: it gets its full report, as before.

// runReviews are the browser reviews of the runs one request reads the
// reports of, read once per run and passed to each read of its report
// (report.Options.Reviews, report.StoredSamplesCurrent), where the
// summary's key, its build and the stored-samples check each read them
// again. A nil *runReviews reads none: each report reads its own (work
// done after the request, such as a build in the background).
type runReviews struct {
	db    *models.DB
	byRun map[int64]*report.BrowserReviews
	// every marks the runs whose reviews were read whatever their human
	// source (every).
	every map[int64]bool
}

// newRunReviews is a request's runReviews, with nothing read yet.
func (h *Handlers) newRunReviews() *runReviews {
	return &runReviews{db: h.DB, byRun: map[int64]*report.BrowserReviews{}, every: map[int64]bool{}}
}

// of is the run's reviews as its reports read them
// (report.ReadChosenReviews: nil, reading none, under the imported
// ratings), read on the first ask.
func (rr *runReviews) of(ctx context.Context, run models.Run) (*report.BrowserReviews, error) {
	if rr == nil {
		return nil, nil
	}
	if pre, ok := rr.byRun[run.ID]; ok {
		return pre, nil
	}
	pre, err := report.ReadChosenReviews(ctx, rr.db, run)
	if err != nil {
		return nil, err
	}
	rr.byRun[run.ID] = pre
	return pre, nil
}

// everyOf is the run's reviews whatever its human source
// (report.ReadBrowserReviews), for a page that shows them as well as
// reading the run's report (the review queue), read on the first ask.
func (rr *runReviews) everyOf(ctx context.Context, run models.Run) (*report.BrowserReviews, error) {
	if pre := rr.byRun[run.ID]; pre != nil || rr.every[run.ID] {
		return pre, nil
	}
	pre, err := report.ReadBrowserReviews(ctx, rr.db, run)
	if err != nil {
		return nil, err
	}
	rr.byRun[run.ID], rr.every[run.ID] = pre, true
	return pre, nil
}

// storedResults returns a finished run's summary when its stored
// per-sample results are the run's current ones (its human source as
// chosen now), nil when the full report must be built instead: a run still
// going, or stored results racing a change of human source. A large
// finished run whose summary is not stored yet gives the *preparingError
// of runSummary (its build goes on in the background). The run's browser
// reviews are read once, through rr.
func (h *Handlers) storedResults(ctx context.Context, run models.Run, rr *runReviews) (*report.Report, error) {
	if !run.Finished() {
		return nil, nil
	}
	pre, err := rr.of(ctx, run)
	if err != nil {
		return nil, err
	}
	sum, err := h.runSummary(ctx, run.ID, report.Options{Reviews: pre})
	if err != nil {
		return nil, err
	}
	if !sum.Run.Finished() || !sameRun(sum.Run, run) {
		return nil, nil // resumed since it was read
	}
	// The summary alone cannot tell: it may have been read just before a
	// human source was chosen again.
	if err := report.StoredSamplesCurrent(ctx, h.DB, sum.Run, pre); err != nil {
		if errors.Is(err, report.ErrSamplesNotStored) {
			return nil, nil
		}
		return nil, err
	}
	return sum, nil
}

// criterionSource chooses where criterion ci of run is read from: the
// run's summary when its stored results can be read (storedResults, and
// not full), otherwise the criterion's samples from the run's full report.
// A criterion the run does not have is an EInvalid error. The run's
// browser reviews are read once, through rr.
func (h *Handlers) criterionSource(ctx context.Context, run models.Run, ci int, full bool, rr *runReviews) (*report.Report, []report.SampleResult, error) {
	var crits []report.CriterionReport
	var sum *report.Report
	if !full {
		var err error
		if sum, err = h.storedResults(ctx, run, rr); err != nil {
			return nil, nil, err
		}
	}
	var rep *report.Report
	if sum != nil {
		crits = sum.Criteria
	} else {
		pre, err := rr.of(ctx, run)
		if err != nil {
			return nil, nil, err
		}
		if rep, err = h.buildReportWith(ctx, run.ID, report.Options{Reviews: pre}); err != nil {
			return nil, nil, err
		}
		crits = rep.Criteria
	}
	if ci < 0 || ci >= len(crits) {
		return nil, nil, models.Errorf(models.EInvalid, "run %d has no criterion %d", run.ID, ci+1)
	}
	if sum != nil {
		return sum, nil, nil
	}
	return nil, rep.Criteria[ci].Samples, nil
}

// criterionSamples are one criterion's samples of a run, in dataset order,
// as the queue reads them, with a way to read the shown ones in full.
type criterionSamples struct {
	outcomes []models.SampleOutcome
	// sample reads the outcomes[i]'s full result with its text.
	sample func(ctx context.Context, i int) (report.SampleResult, error)
}

// queueSamples reads criterion ci of run for the review queue: from the
// stored results of a finished run, otherwise (or with full, which tests
// use to compare) from the run's full report.
func (h *Handlers) queueSamples(ctx context.Context, run models.Run, ci int, full bool, rr *runReviews) (criterionSamples, error) {
	sum, samples, err := h.criterionSource(ctx, run, ci, full, rr)
	if err != nil {
		return criterionSamples{}, err
	}
	if sum == nil {
		out := make([]models.SampleOutcome, len(samples))
		for i, s := range samples {
			out[i] = models.SampleOutcome{RowID: s.RowID, Final: s.Final, Human: s.Human, AbsDiff: s.AbsDiff, Rounds: s.Rounds}
		}
		return criterionSamples{outcomes: out, sample: func(_ context.Context, i int) (report.SampleResult, error) {
			return samples[i], nil
		}}, nil
	}
	c := sum.Criteria[ci]
	out, err := h.DB.ListRunSampleOutcomes(ctx, run.ID, c.Index, sum.Run.Settings.Rounds)
	if err != nil {
		return criterionSamples{}, err
	}
	if len(out) != c.SampleCount {
		return criterionSamples{}, fmt.Errorf("run %d, criterion %d: %d stored results, the summary counts %d", run.ID, c.Index, len(out), c.SampleCount)
	}
	return criterionSamples{outcomes: out, sample: func(ctx context.Context, i int) (report.SampleResult, error) {
		rows, err := report.LoadSampleRows(ctx, h.DB, sum, ci, []int64{out[i].RowID})
		if err != nil {
			return report.SampleResult{}, err
		}
		if len(rows) != 1 {
			return report.SampleResult{}, fmt.Errorf("run %d, criterion %d: the stored result of row %d is gone", run.ID, c.Index, out[i].RowID)
		}
		return rows[0], nil
	}}, nil
}

// alignSamples are one criterion's samples of a run, in dataset order, as
// the alignment reads them: row, final score, human rating and (when
// asked) the sample's id; texts reads the given rows in full.
type alignSamples struct {
	scores []models.SampleScore
	texts  func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error)
}

// alignSamplesOf reads criterion ci of run for the alignment: from the
// stored results of a finished run, otherwise (or with full) from the
// run's full report, whose human ratings are those the stored results
// hold: the alignment sees exactly the human ratings the report uses (so
// when reviewers' browser ratings join the report, they join here too).
func (h *Handlers) alignSamplesOf(ctx context.Context, run models.Run, ci int, externalIDs, full bool, rr *runReviews) (alignSamples, error) {
	sum, samples, err := h.criterionSource(ctx, run, ci, full, rr)
	if err != nil {
		return alignSamples{}, err
	}
	if sum == nil {
		out := make([]models.SampleScore, len(samples))
		byRow := make(map[int64]int, len(samples))
		for i, s := range samples {
			out[i] = models.SampleScore{RowID: s.RowID, Final: s.Final, Human: s.Human}
			if externalIDs {
				out[i].ExternalID = s.ExternalID
			}
			byRow[s.RowID] = i
		}
		return alignSamples{scores: out, texts: func(_ context.Context, ids []int64) (map[int64]report.SampleResult, error) {
			m := make(map[int64]report.SampleResult, len(ids))
			for _, id := range ids {
				if i, ok := byRow[id]; ok {
					m[id] = samples[i]
				}
			}
			return m, nil
		}}, nil
	}
	c := sum.Criteria[ci]
	out, err := h.DB.ListRunSampleScores(ctx, run.ID, c.Index, externalIDs)
	if err != nil {
		return alignSamples{}, err
	}
	if len(out) != c.SampleCount {
		return alignSamples{}, fmt.Errorf("run %d, criterion %d: %d stored results, the summary counts %d", run.ID, c.Index, len(out), c.SampleCount)
	}
	return alignSamples{scores: out, texts: func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error) {
		rows, err := report.LoadSampleRows(ctx, h.DB, sum, ci, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64]report.SampleResult, len(rows))
		for _, r := range rows {
			m[r.RowID] = r
		}
		return m, nil
	}}, nil
}
