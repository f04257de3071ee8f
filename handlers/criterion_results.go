package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	// live are the shared computations of running runs' figures this
	// request read (liveReport), by their report, which derive what
	// every view derives alike once (liveFiguresEntry.memo).
	live map[*report.Report]*liveFiguresEntry
}

// liveOf is the shared computation rep came from, nil when it is not a
// running run's shared report (or rr keeps none).
func (rr *runReviews) liveOf(rep *report.Report) *liveFiguresEntry {
	if rr == nil {
		return nil
	}
	return rr.live[rep]
}

// newRunReviews is a request's runReviews, with nothing read yet.
func (h *Handlers) newRunReviews() *runReviews {
	return &runReviews{db: h.DB, byRun: map[int64]*report.BrowserReviews{}, every: map[int64]bool{}, live: map[*report.Report]*liveFiguresEntry{}}
}

// of is the run's reviews as its reports read them, kept for the whole
// request (report.ChosenReviewsOnDemand: nil, reading none, under the
// imported ratings). They are read only when a report needs them: a
// finished run whose stored results are proved current (the stored
// summary's key, report.StoredSamplesCurrent) reads none; call Load on
// them before reading their fields.
func (rr *runReviews) of(ctx context.Context, run models.Run) (*report.BrowserReviews, error) {
	if rr == nil {
		return nil, nil
	}
	if pre, ok := rr.byRun[run.ID]; ok {
		return pre, nil
	}
	pre, err := report.ChosenReviewsOnDemand(ctx, rr.db, run)
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
		return pre, pre.Load(ctx) // of's are read on demand
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
// reviews are read at most once, through rr, and not at all while the
// run's stored ratings proof holds (report.ChosenReviewsOnDemand).
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
	sum, samples, _, err := h.criterionReport(ctx, run, ci, full, rr)
	return sum, samples, err
}

// criterionReport is criterionSource with the report read: the summary,
// or the full report whose criterion's samples are given.
func (h *Handlers) criterionReport(ctx context.Context, run models.Run, ci int, full bool, rr *runReviews) (*report.Report, []report.SampleResult, *report.Report, error) {
	if run.Finished() {
		h.live.forget(run.ID) // its figures while it ran are read no more
	}
	var crits []report.CriterionReport
	var sum *report.Report
	if !full {
		var err error
		if sum, err = h.storedResults(ctx, run, rr); err != nil {
			return nil, nil, nil, err
		}
	}
	var rep *report.Report
	if sum != nil {
		crits = sum.Criteria
	} else {
		pre, err := rr.of(ctx, run)
		if err != nil {
			return nil, nil, nil, err
		}
		// Read on demand (rr.of): by the report built from them, and by
		// a running run's shared figures only when their ratings' key
		// is not proved current or they are computed again
		// (liveRatingsKey), so a view of the review queue or a sample
		// of a run under way reads no review while nothing changed
		// (TestRunningRunReviewPagesReadRatingsOnlyWhenTheyChange).
		if !full && !run.Finished() {
			// A run under way: its figures without the texts, which
			// the callers read for the samples they show
			// (criterionTexts).
			var lv *liveFiguresEntry
			if lv, err = h.liveReport(ctx, run, report.Options{Reviews: pre}); err == nil {
				rep = lv.rep
				if rr != nil && rr.live != nil {
					rr.live[rep] = lv
				}
			}
		} else {
			rep, err = h.buildReportWith(ctx, run.ID, report.Options{Reviews: pre})
		}
		if err != nil {
			return nil, nil, nil, err
		}
		crits = rep.Criteria
	}
	if ci < 0 || ci >= len(crits) {
		return nil, nil, nil, models.Errorf(models.EInvalid, "run %d has no criterion %d", run.ID, ci+1)
	}
	if sum != nil {
		return sum, nil, sum, nil
	}
	return nil, rep.Criteria[ci].Samples, rep, nil
}

// criterionSamples are one criterion's samples of a run, in dataset order,
// as the queue reads them, with a way to read the shown ones in full.
type criterionSamples struct {
	outcomes []models.SampleOutcome
	// sample reads the outcomes[i]'s full result with its text.
	sample func(ctx context.Context, i int) (report.SampleResult, error)
	// rep is the report the outcomes were read from, nil for stored
	// results (runReviews.live has its shared computation's).
	rep *report.Report
}

// queueSamples reads criterion ci of run for the review queue: from the
// stored results of a finished run, otherwise (or with full, which tests
// use to compare) from the run's full report.
func (h *Handlers) queueSamples(ctx context.Context, run models.Run, ci int, full bool, rr *runReviews) (criterionSamples, error) {
	sum, samples, rep, err := h.criterionReport(ctx, run, ci, full, rr)
	if err != nil {
		return criterionSamples{}, err
	}
	if sum == nil {
		// A running run's shared figures convert once (liveFigures.memo).
		out := rr.liveOf(rep).memo(queueOutcomesKey(ci), func() any {
			out := make([]models.SampleOutcome, len(samples))
			for i, s := range samples {
				out[i] = models.SampleOutcome{RowID: s.RowID, Final: s.Final, Human: s.Human, AbsDiff: s.AbsDiff, Rounds: s.Rounds}
			}
			return out
		}).([]models.SampleOutcome)
		return criterionSamples{outcomes: out, rep: rep, sample: func(ctx context.Context, i int) (report.SampleResult, error) {
			s := []report.SampleResult{samples[i]}
			return s[0], h.criterionTexts(ctx, run, full, rep, s)
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

// criterionTexts fills in the texts of shown, copies of samples of rep as
// criterionReport read it: for a run under way (and not full) rep holds
// none, and they are read by key (report.WithTexts); otherwise they are
// there already.
func (h *Handlers) criterionTexts(ctx context.Context, run models.Run, full bool, rep *report.Report, shown []report.SampleResult) error {
	if full || run.Finished() {
		return nil
	}
	return report.WithTexts(ctx, h.DB, rep, shown)
}

// alignSamples are one criterion's samples of a run, in dataset order, as
// the alignment reads them: row, final score, human rating and (when
// asked) the sample's id; texts reads the given rows in full.
type alignSamples struct {
	scores []models.SampleScore
	texts  func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error)
	// rep is the report the scores were read from (the run's summary or
	// its full report), which says which human ratings they hold.
	rep *report.Report
}

// alignSamplesOf reads criterion ci of run for the alignment: from the
// stored results of a finished run, otherwise (or with full) from the
// run's full report, whose human ratings are those the stored results
// hold: the alignment sees exactly the human ratings the report uses (so
// when reviewers' browser ratings join the report, they join here too).
func (h *Handlers) alignSamplesOf(ctx context.Context, run models.Run, ci int, externalIDs, full bool, rr *runReviews) (alignSamples, error) {
	sum, samples, rep, err := h.criterionReport(ctx, run, ci, full, rr)
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
		return alignSamples{scores: out, texts: func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error) {
			var shown []report.SampleResult
			for _, id := range ids {
				if i, ok := byRow[id]; ok {
					shown = append(shown, samples[i])
				}
			}
			if err := h.criterionTexts(ctx, run, full, rep, shown); err != nil {
				return nil, err
			}
			m := make(map[int64]report.SampleResult, len(shown))
			for _, s := range shown {
				m[s.RowID] = s
			}
			return m, nil
		}, rep: rep}, nil
	}
	c := sum.Criteria[ci]
	out, err := h.DB.ListRunSampleScores(ctx, run.ID, c.Index, externalIDs)
	if err != nil {
		return alignSamples{}, err
	}
	if len(out) != c.SampleCount {
		return alignSamples{}, fmt.Errorf("run %d, criterion %d: %d stored results, the summary counts %d", run.ID, c.Index, len(out), c.SampleCount)
	}
	return alignSamples{scores: out, texts: h.storedSampleTexts(sum, ci), rep: sum}, nil
}

// storedSampleTexts reads the stored results of criterion ci of a run's
// stored summary, with their samples' text, by row id.
func (h *Handlers) storedSampleTexts(sum *report.Report, ci int) func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error) {
	return func(ctx context.Context, ids []int64) (map[int64]report.SampleResult, error) {
		rows, err := report.LoadSampleRows(ctx, h.DB, sum, ci, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64]report.SampleResult, len(rows))
		for _, r := range rows {
			m[r.RowID] = r
		}
		return m, nil
	}
}

// queueIndex is a criterion's review queue as its page reads it: how many
// samples it has, the note on an order that ranks none, how many of them
// the reviewer rated, the first place whose sample they have not (0 when
// they rated every one), and a way to read the sample at a place.
type queueIndex struct {
	total, ratedByMe, firstUnrated int
	note                           string
	// asOf is the run as its figures read it, for a run under way (nil
	// otherwise): the figures shown may be the last computed, from
	// before the run moved (liveFiguresFor), and the queue's version
	// says how far the run was in the figures it is ordered by.
	asOf *models.Run
	at   func(ctx context.Context, k int) (report.SampleResult, error)
	// placeOf is the place of the sample of a dataset row in the queue as
	// it is ordered now; found is false when the queue has no such sample.
	placeOf func(ctx context.Context, rowID int64) (k int, found bool, err error)
}

// queueIndexOf is criterion ci of run's review queue in order (seeded with
// seed when random) for the reviewer whose ratings who names (nil: a
// reviewer not known yet, who rated nothing). A finished run reads it from
// its stored results through their ranks (storedQueueIndex): the count of
// the reviewer's rated samples and the first unrated one found in SQL,
// and the one sample shown, never every stored result nor the rated ids. A run still going, full (tests) and the order by
// spread of results stored before it was ranked (00038) order every
// sample's outcome as queueOrder does.
func (h *Handlers) queueIndexOf(ctx context.Context, run models.Run, ci int, order string, seed int64, full bool, rr *runReviews, who *models.ReviewerRatings) (queueIndex, error) {
	if !full {
		sum, err := h.storedResults(ctx, run, rr)
		if err != nil {
			return queueIndex{}, err
		}
		if sum != nil {
			if ci < 0 || ci >= len(sum.Criteria) {
				return queueIndex{}, models.Errorf(models.EInvalid, "run %d has no criterion %d", run.ID, ci+1)
			}
			qi, ranked, err := h.storedQueueIndex(ctx, sum, ci, order, seed, who)
			if err != nil || ranked {
				return qi, err
			}
		}
	}
	return h.outcomesQueueIndex(ctx, run, ci, order, seed, full, rr, who)
}

// outcomesQueueIndex is queueIndexOf from every sample's outcome
// (queueSamples: the stored results of a finished run, unless full, else
// the full report), ordered by queueOrder. A run under way orders its
// shared figures (liveReport) once per computation and order, and a view
// then looks up the reviewer's rated rows in that order by key: no view
// reads or sorts every sample's outcome again.
func (h *Handlers) outcomesQueueIndex(ctx context.Context, run models.Run, ci int, order string, seed int64, full bool, rr *runReviews, who *models.ReviewerRatings) (queueIndex, error) {
	qs, err := h.queueSamples(ctx, run, ci, full, rr)
	if err != nil {
		return queueIndex{}, err
	}
	// Every outcome is in memory here already: the rated rows are looked
	// up among them.
	var rated []int64
	if who != nil {
		if rated, err = h.DB.ListReviewerRatedRows(ctx, who.WorkspaceID, who.DatasetID, who.Criterion, who.Reviewer, who.UserID, who.Lo, who.Hi); err != nil {
			return queueIndex{}, err
		}
	}
	qo := rr.liveOf(qs.rep).memo(queueOrderKey{ci, order, seed}, func() any { return orderOutcomes(qs.outcomes, order, seed) }).(*orderedOutcomes)
	mine := make(map[int64]bool, len(rated))
	for _, id := range rated {
		mine[id] = true
	}
	qi := queueIndex{total: len(qo.ord), note: qo.note}
	if qs.rep != nil && !run.Finished() {
		qi.asOf = &qs.rep.Run
	}
	for id := range mine {
		if _, ok := qo.place[id]; ok {
			qi.ratedByMe++
		}
	}
	for k, i := range qo.ord {
		if !mine[qo.outcomes[i].RowID] {
			qi.firstUnrated = k
			break
		}
	}
	qi.at = func(ctx context.Context, k int) (report.SampleResult, error) { return qs.sample(ctx, qo.ord[k]) }
	qi.placeOf = func(_ context.Context, rowID int64) (int, bool, error) {
		k, ok := qo.place[rowID]
		return k, ok, nil
	}
	return qi, nil
}

// queueOutcomesKey names one criterion's outcomes.
type queueOutcomesKey int

// queueOrderKey names one order of one criterion's review queue.
type queueOrderKey struct {
	criterion int
	order     string
	seed      int64
}

// orderedOutcomes are a criterion's outcomes in a queue's order: ord[k]
// is the outcome at place k, place the place of each row's sample.
type orderedOutcomes struct {
	outcomes []models.SampleOutcome
	ord      []int
	place    map[int64]int
	note     string
}

func orderOutcomes(outcomes []models.SampleOutcome, order string, seed int64) *orderedOutcomes {
	qo := &orderedOutcomes{outcomes: outcomes, ord: queueOrder(outcomes, order, seed), note: queueOrderNote(outcomes, order)}
	qo.place = make(map[int64]int, len(qo.ord))
	for k, i := range qo.ord {
		if _, seen := qo.place[outcomes[i].RowID]; !seen {
			qo.place[outcomes[i].RowID] = k
		}
	}
	return qo
}

// storedQueueIndex is the queue of criterion ci of a finished run, read
// from the stored results' ranks. The queue by disagreement is the results
// table sorted by difference, largest first (rank_diff_desc: the
// differences are never negative, those missing last, ties in dataset
// order, as queueOrder sorts); the queue by spread is rank_spread_desc
// (report.SpreadOrder, queueOrder's); the random queue is the seeded
// shuffle of the dataset order (rank_position). A place is one row of the
// order's index; the reviewer's rated samples are counted, and the first
// unrated one found, in SQL (models.ReviewerQueueMarks, in one
// statement; the random queue marks the rated ranks,
// EachReviewerRatedRank), where the rated ids were read into Go and sent
// back as IN lists before. ranked is false when
// the stored results have no ranks by spread (stored before 00038).
func (h *Handlers) storedQueueIndex(ctx context.Context, sum *report.Report, ci int, order string, seed int64, who *models.ReviewerRatings) (qi queueIndex, ranked bool, err error) {
	c := sum.Criteria[ci]
	sortKey, dir := "diff", "desc"
	var perm []int // the random queue's places, as ranks in dataset order
	switch order {
	case orderRandom:
		sortKey, dir = "position", "asc"
		perm = randomOrder(c.SampleCount, seed)
	case orderUncertain:
		sortKey = "spread"
	}
	rank := func(k int) int {
		if perm != nil {
			return perm[k]
		}
		return k
	}
	// row reads the stored result at one rank of the order.
	row := func(ctx context.Context, r int) (models.RunSampleResult, bool, error) {
		rows, err := h.DB.ListRunSampleResults(ctx, models.SampleResultPage{RunID: sum.Run.ID, Criterion: c.Index, Sort: sortKey, Dir: dir,
			Offset: r, Limit: 1, Total: c.SampleCount})
		if err != nil || len(rows) == 0 {
			return models.RunSampleResult{}, false, err
		}
		return rows[0], true, nil
	}
	// sample reads the stored result at one rank with its text.
	sample := func(ctx context.Context, r int) (report.SampleResult, error) {
		res, found, err := row(ctx, r)
		if err != nil {
			return report.SampleResult{}, err
		}
		if !found {
			return report.SampleResult{}, fmt.Errorf("run %d, criterion %d: no stored result at rank %d by %s", sum.Run.ID, c.Index, r, sortKey)
		}
		rows, err := report.LoadSampleRows(ctx, h.DB, sum, ci, []int64{res.RowID})
		if err != nil {
			return report.SampleResult{}, err
		}
		if len(rows) != 1 {
			return report.SampleResult{}, fmt.Errorf("run %d, criterion %d: the stored result of row %d is gone", sum.Run.ID, c.Index, res.RowID)
		}
		return rows[0], nil
	}
	qi = queueIndex{total: c.SampleCount}
	if qi.total > 0 {
		// The first place says whether the order ranks any sample: the
		// largest difference or spread comes first.
		first, found, err := row(ctx, 0)
		if err != nil {
			return queueIndex{}, false, err
		}
		if !found {
			return queueIndex{}, false, nil // not ranked by spread
		}
		switch order {
		case orderDisagreement:
			if first.AbsDiff == nil {
				qi.note = unrankedNote(order)
			}
		case orderUncertain:
			s, err := sample(ctx, 0)
			if err != nil {
				return queueIndex{}, false, err
			}
			if _, ok := report.RoundSpread(s.Rounds); !ok {
				qi.note = unrankedNote(order)
			}
		}
	} else {
		qi.note = unrankedNote(order)
	}
	if who != nil {
		if qi.ratedByMe, qi.firstUnrated, err = h.storedQueueMarks(ctx, sum.Run.ID, c.Index, sortKey, dir, qi.total, perm, *who); err != nil {
			return queueIndex{}, false, err
		}
	}
	qi.at = func(ctx context.Context, k int) (report.SampleResult, error) { return sample(ctx, rank(k)) }
	// A row's place is its stored rank in the order (one row looked up by
	// key); in the random queue, the place the shuffle gives that rank.
	qi.placeOf = func(ctx context.Context, rowID int64) (int, bool, error) {
		rs, err := h.DB.ListRunSampleRanks(ctx, sum.Run.ID, c.Index, sortKey, dir, []int64{rowID})
		if err != nil || len(rs) == 0 {
			return 0, false, err
		}
		if perm == nil {
			return rs[0].Rank, true, nil
		}
		k := slices.Index(perm, rs[0].Rank)
		return k, k >= 0, nil
	}
	return qi, true, nil
}

// storedQueueMarks counts the stored results of a run's criterion (total
// of them) the reviewer rates now, and finds the first place of the queue
// in the order sort, dir whose sample they do not rate (0 when they rate
// them all, as before). perm, for the random queue, gives the rank at
// each place: the rated ranks are marked from the database, each once,
// and the places walked; any other order's place is its rank, found by
// an anti-join that stops at the first unrated sample.
func (h *Handlers) storedQueueMarks(ctx context.Context, runID int64, ci int, sort, dir string, total int, perm []int, who models.ReviewerRatings) (rated, firstUnrated int, err error) {
	if perm != nil {
		taken := make([]bool, total)
		err := h.DB.EachReviewerRatedRank(ctx, runID, ci, sort, dir, who, func(r int) {
			rated++
			if r >= 0 && r < total {
				taken[r] = true
			}
		})
		if err != nil {
			return 0, 0, err
		}
		for k := range total {
			if !taken[perm[k]] {
				return rated, k, nil
			}
		}
		return rated, 0, nil
	}
	rated, k, found, err := h.DB.ReviewerQueueMarks(ctx, runID, ci, sort, dir, who)
	if err != nil || rated == 0 || !found || k < 0 || k >= total {
		return rated, 0, err
	}
	return rated, k, nil
}
