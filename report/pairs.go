package report

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/batcheval/batcheval/models"
)

// ErrSamplesNotStored says that a finished run's stored per-sample results
// are missing or were computed from other inputs than the run has now (a
// human source chosen or a resume since): its summary must be built again
// (LoadSummary) before its samples can be read from storage.
var ErrSamplesNotStored = errors.New("the run's per-sample results are not stored for its current inputs")

// StoredSamplesCurrent checks that a finished run's stored per-sample
// results (run_sample_results) were computed from its current inputs (the
// run as finished, the human ratings chosen now), reading none of them:
// the error wraps ErrSamplesNotStored when they were not. pre are the
// run's browser reviews when the request has read them already
// (ReadBrowserReviews), nil to read them here if the check needs them.
func StoredSamplesCurrent(ctx context.Context, db *models.DB, run models.Run, pre *BrowserReviews) error {
	if !run.Finished() {
		return models.Errorf(models.EConflict, "run %d is not finished: its samples are not stored", run.ID)
	}
	choice, err := db.FindRunHumanSource(ctx, run.ID)
	if err != nil {
		return err
	}
	set, found, err := db.FindRunSampleSet(ctx, run.ID)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("read the samples of run %d: %w", run.ID, ErrSamplesNotStored)
	}
	ratings, err := usedRatingsKey(ctx, db, run, choice, pre)
	if err != nil {
		return err
	}
	if set.InputKey != sampleKey(run, choice, ratings) {
		return fmt.Errorf("read the samples of run %d: %w", run.ID, ErrSamplesNotStored)
	}
	return nil
}

// WithStoredScores is sum, a finished run's summary (LoadSummary), with the
// samples of the given criteria (every criterion when none is given) read
// back from the run's stored per-sample results: each sample's row, final
// score and human rating, in dataset order, and its dataset id when
// externalIDs is set. No round scores, batches or dataset text are read,
// so it costs a fraction of BuildWith; the samples' other fields (text,
// rounds, position, difference, unreadable count) are empty. It is what
// PairScores, CompareCriterion and CompareAverage read of a report, and
// they give the same figures on it as on the full report. A criterion not
// asked for keeps no samples. The error wraps ErrSamplesNotStored when the
// stored results are not the run's current ones. sum is not changed.
func WithStoredScores(ctx context.Context, db *models.DB, sum *Report, externalIDs bool, criteria ...int) (*Report, error) {
	run := sum.Run
	if err := StoredSamplesCurrent(ctx, db, run, nil); err != nil {
		return nil, err
	}
	out := *sum
	out.Criteria = slices.Clone(sum.Criteria)
	for i := range out.Criteria {
		c := &out.Criteria[i]
		c.Samples = nil
		if len(criteria) > 0 && !slices.Contains(criteria, i) {
			continue
		}
		stored, err := db.ListRunSampleScores(ctx, run.ID, c.Index, externalIDs)
		if err != nil {
			return nil, err
		}
		if len(stored) != c.SampleCount {
			// Stored under the same inputs, so only a write cut short
			// (which its transaction rules out) or a bug gets here.
			return nil, fmt.Errorf("read the samples of run %d, criterion %d: %d stored, the summary counts %d: %w",
				run.ID, c.Index, len(stored), c.SampleCount, ErrSamplesNotStored)
		}
		c.Samples = make([]SampleResult, len(stored))
		for k, s := range stored {
			c.Samples[k] = SampleResult{RowID: s.RowID, ExternalID: s.ExternalID, Final: s.Final, Human: s.Human}
		}
	}
	return &out, nil
}
