package report

// The figures' computation as it was before livemem45 (reads of
// scoreFigure and RunBatch layouts, a criterion's temporaries grown
// by appending), kept unchanged so that one process can compare it with
// today's: BenchmarkLiveFigureMemory measures both, and
// TestFiguresMatchTheCodeBefore checks that their figures are the same.
// It lives in a test file (livemem46) so that the shipped binary carries
// one implementation of the figures.

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// buildFiguresBefore is BuildFigures as it was before livemem45: BuildWith
// with every score (scoreFigure) and batch layout of the run read
// at once, then computeFiguresBefore; it stores the figures of finished
// criteria as BuildWith does.
func buildFiguresBefore(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
	opt.figuresOnly = true
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return nil, err
	}
	if run, err = withRubricScales(ctx, db, run); err != nil {
		return nil, err
	}
	ds, err := db.FindDataset(ctx, wsID, run.DatasetID)
	if err != nil {
		return nil, err
	}
	if opt.GroupColumn != "" {
		ds.GroupColumn = opt.GroupColumn
	}
	rows, err := db.ListDatasetRowFigures(ctx, ds.ID, []string{ds.GroupColumn, systemColumn(opt, ds)})
	if err != nil {
		return nil, err
	}
	// Scores first, then the batches: a batch done between the two reads
	// is not taken for finished with scores missing.
	scores, err := listScoreFiguresBefore(ctx, db, run.ID)
	if err != nil {
		return nil, err
	}
	batches, err := listBatchLayoutBefore(ctx, db, run.ID)
	if err != nil {
		return nil, err
	}
	layout := layoutOf(batches)
	if opt.tooFew, err = tooFewUnits(ctx, db, run); err != nil {
		return nil, err
	}
	run, rows, use, err := applyHumanSource(ctx, db, wsID, run, rows, opt.Reviews)
	if err != nil {
		return nil, err
	}
	if opt.memo, err = loadStats(ctx, db, run.ID); err != nil {
		return nil, err
	}
	rep := computeFiguresBefore(run, ds, rows, layout, scores, opt)
	done := finishedCriteria(layout, len(run.RubricSnapshot.Criteria))
	rep.Humans = use
	if err := withSampleWiseCounts(ctx, db, rep); err != nil {
		return nil, err
	}
	if !run.Finished() {
		maps.DeleteFunc(opt.memo.fresh, func(k statsKey, _ storedEntry) bool { return !done[k.criterion] })
	}
	if len(opt.memo.fresh) > 0 {
		if err := saveStats(ctx, db, run.ID, opt.memo); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// computeFiguresBefore is ComputeWith over what the figures read of the scores
// and batches.
func computeFiguresBefore(run models.Run, ds models.Dataset, rows []models.DatasetRow, batches []batchFigure, scores []scoreFigure, opt Options) *Report {
	system := systemColumn(opt, ds)
	rep := &Report{Run: run, Dataset: ds, Simulated: run.Simulated}
	fields := run.RubricSnapshot.Fields
	if len(fields) == 0 {
		fields = ds.Fields
	}
	n := run.Settings.Rounds
	method := methods.For(run.Method)
	// A score row of a failed batch got no answer: its call failed.
	failed := map[int64]bool{}
	for _, b := range batches {
		if b.Status == models.BatchFailed {
			failed[b.ID] = true
		}
	}
	// rowAt[rowID] is the row's place in rows, which is its sample's in
	// every criterion's Samples: one map for the report, not one a
	// criterion and figure.
	rowAt := make(map[int64]int, len(rows))
	for i, r := range rows {
		rowAt[r.ID] = i
	}
	for ci, crit := range run.RubricSnapshot.Criteria {
		// A criterion with annotator columns and no human column is
		// compared with its annotators' mean (models.WithAnnotatorMean,
		// which Build applies with the human source; here for the rows
		// of a caller that did not).
		var meanOf []string
		if models.MeansAnnotators(crit) {
			meanOf = crit.AnnotatorColumns
			crit.HumanColumn = models.AnnotatorMeanKeyAmong(meanOf, func(k string) bool { return slices.Contains(ds.RatingColumns, k) })
		}
		// grid holds the rows' rounds, row k's at grid[k*n:(k+1)*n] (k its
		// place in rows, rowAt), and is the samples' Rounds: one array a
		// criterion, not a slice a sample. The readable scores' values
		// are in vals, which grid points into. judged marks rounds that
		// have an answer, so rounds not yet judged are not counted as
		// unreadable; unanswered marks those whose call failed, short
		// those of a unit that read too few answers.
		readable := 0
		for _, s := range scores {
			if int(s.CriterionIndex) == ci && int(s.Round) < n && s.Readable {
				readable++
			}
		}
		vals := make([]float64, 0, readable)
		grid := make([]*float64, len(rows)*n)
		judged := make([]bool, len(rows)*n)
		unanswered := make([]bool, len(rows)*n)
		short := make([]bool, len(rows)*n)
		for _, s := range scores {
			if int(s.CriterionIndex) != ci || s.Round < 0 || int(s.Round) >= n {
				continue
			}
			k, ok := rowAt[s.RowID]
			if !ok {
				continue // a score of no row the report shows
			}
			at := k*n + int(s.Round)
			grid[at] = nil
			if s.Readable {
				vals = append(vals, s.Score)
				grid[at] = &vals[len(vals)-1]
			}
			judged[at] = true
			unanswered[at] = !s.Readable && failed[s.BatchID]
			short[at] = !s.Readable && opt.tooFew[s.BatchID]
		}
		cr := CriterionReport{Index: ci, Criterion: crit, Samples: make([]SampleResult, 0, len(rows))}
		for g, row := range rows {
			sr := SampleResult{RowID: row.ID, ExternalID: row.ExternalID, Position: int32(row.Position), Rounds: grid[g*n : (g+1)*n : (g+1)*n]}
			if !opt.figuresOnly {
				sr.Fields = row.Sample(fields).Fields
			}
			k := 0 // readable rounds
			for r, v := range sr.Rounds {
				switch {
				case v != nil:
					k++
				case judged[g*n+r]:
					sr.Missing++
					switch {
					case unanswered[g*n+r]:
						sr.NoAnswer++
					case short[g*n+r]:
						sr.TooFew++
					}
				}
			}
			// The method says how rounds make a final score (every method
			// so far: the mean of the readable rounds).
			sr.Final = method.Final(sr.Rounds)
			switch {
			case meanOf != nil:
				sr.Human = models.AnnotatorMean(row, meanOf)
			case crit.HumanColumn != "":
				if h, ok := row.Ratings[crit.HumanColumn]; ok && h != nil && !math.IsNaN(*h) {
					v := *h
					sr.Human = &v
				}
			}
			cr.Scored += k
			cr.Missing += int(sr.Missing)
			cr.NoAnswer += int(sr.NoAnswer)
			cr.TooFew += int(sr.TooFew)
			cr.Samples = append(cr.Samples, sr)
		}
		key := statsKey{ci, system}
		hash := criterionInputs(&cr, system, rows)
		pre, stored := opt.memo.lookup(key, hash)
		if !stored {
			pre = criterionStats{}
		}
		fillCriterionBefore(&cr, run, batches, rowAt, stored, pre)
		fillExtrasBefore(&cr, ds, rows, rowAt, scores)
		fillSystem(&cr, system, rows, stored, pre)
		fillScatterBefore(&cr)
		if !stored {
			opt.memo.record(key, hash, criterionStats{Pearson: cr.Pearson, Spearman: cr.Spearman, Kendall: cr.Kendall,
				SystemColumn: cr.SystemColumn, System: cr.System, Interval: cr.Interval})
			if opt.Recomputed != nil {
				opt.Recomputed(ci)
			}
		}
		rep.Criteria = append(rep.Criteria, cr)
	}
	return rep
}

// fillScatterBefore adds the sample counts and the scatter's digest.
func fillScatterBefore(cr *CriterionReport) {
	cr.SampleCount = len(cr.Samples)
	for _, s := range cr.Samples {
		if s.Missing > 0 {
			cr.MissingSamples++
		}
	}
	if !cr.HasHuman {
		return
	}
	var xs, ys []float64
	var plotted []int // plotted[i] is the index in cr.Samples of point i
	for k, s := range cr.Samples {
		if s.Final == nil || s.Human == nil {
			continue
		}
		xs, ys = append(xs, *s.Final), append(ys, *s.Human)
		plotted = append(plotted, k)
	}
	d := DigestScatter(xs, ys, cr.Criterion.Lo, cr.Criterion.Hi, func(i int) ScatterDot {
		s := &cr.Samples[plotted[i]]
		return ScatterDot{RowID: s.RowID, ExternalID: s.ExternalID, X: *s.Final, Y: *s.Human}
	})
	cr.Scatter = &d
}

// fillCriterionBefore computes a criterion's figures; with stored set, the
// correlations and their intervals are pre's instead of computed.
func fillCriterionBefore(cr *CriterionReport, run models.Run, batches []batchFigure, place map[int64]int, stored bool, pre criterionStats) {
	crit := cr.Criterion
	n := run.Settings.Rounds
	finals := make([]*float64, len(cr.Samples))
	humans := make([]*float64, len(cr.Samples))
	var finalVals []float64
	hlo, hhi := math.Inf(1), math.Inf(-1)
	for i, s := range cr.Samples {
		finals[i], humans[i] = s.Final, s.Human
		if s.Final != nil {
			finalVals = append(finalVals, *s.Final)
		}
		if s.Human != nil {
			cr.HasHuman = true
			hlo, hhi = math.Min(hlo, *s.Human), math.Max(hhi, *s.Human)
		}
	}
	cr.Histogram = stats.Histogram(finalVals, crit.Lo, crit.Hi, histogramBins)
	cr.Entropy = stats.Entropy(finalVals, entropyBinWidth)
	// Without a single human rating no pair forms: every sample is left
	// out for want of a rating, and says so (n 0, missing = the samples),
	// so that n + missing is the criterion's samples in every case, as
	// the export schema defines missing. With ratings, these are replaced.
	nan := stats.Correlation{Coef: math.NaN(), P: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN(), Missing: len(cr.Samples)}
	cr.Pearson, cr.Spearman, cr.Kendall = nan, nan, nan
	cr.MeanBatchBias = math.NaN()
	if cr.HasHuman && stored {
		cr.Pearson, cr.Spearman, cr.Kendall = pre.Pearson, pre.Spearman, pre.Kendall
		cr.Interval = pre.Interval
	} else if cr.HasHuman {
		xs, ys, missing := stats.Pairs(finals, humans)
		// Bootstrap up to stats.AnalyticAbove pairs (unchanged figures),
		// Fisher z above: the same rule for all three, computed above it
		// on one canonical copy of the pairs (livemem44).
		cs := stats.CorrelationIntervals(xs, ys, stats.DefaultResamples, bootstrapSeed)
		cr.Pearson, cr.Spearman, cr.Kendall, cr.Interval = cs.Pearson, cs.Spearman, cs.Kendall, cs.Interval
		cr.Pearson.Missing, cr.Spearman.Missing, cr.Kendall.Missing = missing, missing, missing
	}
	if cr.HasHuman {
		cr.Reading = stats.Interpret(stats.MethodPearson, cr.Pearson)
		onScale, note := humanOnJudgeScale(hlo, hhi, crit)
		cr.HumanScaleNote, cr.HumanScale = note, humanScaleOf(hlo, hhi, crit)
		for i := range cr.Samples {
			s := &cr.Samples[i]
			if s.Final == nil || s.Human == nil {
				continue
			}
			d := math.Abs(*s.Final - onScale(*s.Human))
			s.AbsDiff = &d
		}
	} else {
		cr.Reading = "This criterion has no human ratings, so the judge's agreement with people cannot be measured."
	}

	// Per round: single round vs running ensemble, and batch bias.
	// place[rowID] is the row's sample in cr.Samples: its rounds' scores
	// and their mean.
	var allBias []stats.BatchScores
	// One round's scores and ensemble means, the same arrays every round
	// (the means' values in ensVals, not one allocation a sample).
	single := make([]*float64, len(cr.Samples))
	ens := make([]*float64, len(cr.Samples))
	ensVals := make([]float64, len(cr.Samples))
	for r := 0; r < n; r++ {
		rs := RoundStat{Round: r + 1, Single: nan, Ensemble: nan, BatchBias: math.NaN()}
		for i, s := range cr.Samples {
			single[i], ens[i] = s.Rounds[r], nil
			var sum float64
			var k int
			for q := 0; q <= r; q++ {
				if v := s.Rounds[q]; v != nil {
					sum += *v
					k++
				}
			}
			if k > 0 {
				ensVals[i] = sum / float64(k)
				ens[i] = &ensVals[i]
			}
		}
		if cr.HasHuman {
			xs, ys, miss := stats.Pairs(single, humans)
			rs.Single = stats.Pearson(xs, ys)
			rs.Single.Missing = miss
			xs, ys, miss = stats.Pairs(ens, humans)
			rs.Ensemble = stats.Pearson(xs, ys)
			rs.Ensemble.Missing = miss
		}
		var roundBias []stats.BatchScores
		for _, b := range batches {
			// figs50: no batch bias for a method that judges samples alone.
			if !methods.For(run.Method).Batched() || int(b.CriterionIndex) != cr.Index || int(b.Round) != r {
				continue
			}
			var bs stats.BatchScores
			for _, id := range b.RowIDs {
				i, ok := place[id]
				if !ok {
					continue
				}
				v, m := cr.Samples[i].Rounds[r], cr.Samples[i].Final
				if v == nil || m == nil {
					continue
				}
				bs.Scores = append(bs.Scores, *v)
				bs.Means = append(bs.Means, *m)
			}
			if len(bs.Scores) > 0 {
				roundBias = append(roundBias, bs)
			}
		}
		if len(roundBias) > 0 {
			rs.BatchBias = stats.MeanBatchBias(roundBias)
			allBias = append(allBias, roundBias...)
		}
		cr.Rounds = append(cr.Rounds, rs)
	}
	if len(allBias) > 0 {
		cr.MeanBatchBias = stats.MeanBatchBias(allBias)
	}

	// Ensemble decomposition on samples with a human rating, on the
	// judge's scale as the position table and the samples' differences.
	if cr.HasHuman {
		onScale, _ := humanOnJudgeScale(hlo, hhi, crit)
		var rounds [][]float64
		var hs []float64
		for _, s := range cr.Samples {
			if s.Human == nil {
				continue
			}
			var vals []float64
			for _, v := range s.Rounds {
				if v != nil {
					vals = append(vals, *v)
				}
			}
			if len(vals) == 0 {
				continue
			}
			rounds = append(rounds, vals)
			hs = append(hs, onScale(*s.Human))
		}
		cr.Decomposition = stats.Decompose(rounds, hs)
		cr.DecompositionNote = "Error of the averaged score = mean error of single rounds − spread between rounds: accurate rounds and diverse rounds both help. " + cr.HumanScaleNote
	} else {
		cr.Decomposition = stats.Decomposition{EnsembleErr: math.NaN(), MeanRoundErr: math.NaN(), MeanVariance: math.NaN()}
		cr.DecompositionNote = "Needs human ratings."
	}
}

// fillExtrasBefore adds the unreadable rate, grouped correlation, the human
// ceiling and the position effect.
func fillExtrasBefore(cr *CriterionReport, ds models.Dataset, rows []models.DatasetRow, rowAt map[int64]int, scores []scoreFigure) {
	if answered := cr.Scored + cr.Unreadable(); answered > 0 {
		cr.UnreadableRate = float64(cr.Unreadable()) / float64(answered)
	}
	if ds.GroupColumn != "" && cr.HasHuman {
		cr.GroupColumn = ds.GroupColumn
		var xs, ys []float64
		var gs []string
		for i, s := range cr.Samples {
			if s.Final == nil || s.Human == nil {
				continue
			}
			xs, ys = append(xs, *s.Final), append(ys, *s.Human)
			gs = append(gs, rows[i].Data[ds.GroupColumn])
		}
		cr.Grouped = map[stats.Method]stats.Grouped{}
		for _, m := range stats.Methods() {
			cr.Grouped[m] = stats.GroupedCorrelation(m, xs, ys, gs)
		}
	}
	cols := models.AnnotatorColumns(cr.Criterion.HumanColumn, cr.Criterion.AnnotatorColumns, rows)
	cr.Ceiling = ceilingOf(cols, rows, cr.Samples, cr.Pearson)
	if cr.Ceiling != nil {
		cr.AnnotatorColumns = cols
	}

	// Position effect: label k in a batch is position k. Human ratings are
	// put on the criterion's scale as everywhere else (humanOnJudgeScale).
	// A sample's human rating is found by its row (rowAt).
	rated := false
	hlo, hhi := math.Inf(1), math.Inf(-1)
	for _, s := range cr.Samples {
		if s.Human != nil {
			rated = true
			hlo, hhi = math.Min(hlo, *s.Human), math.Max(hhi, *s.Human)
		}
	}
	onScale, _ := humanOnJudgeScale(hlo, hhi, cr.Criterion)
	// Allocated at their size: at a million samples these are two million
	// values each, and grown by appending they took about twice that.
	k := 0
	for _, s := range scores {
		if int(s.CriterionIndex) == cr.Index && s.Readable {
			k++
		}
	}
	pos := make([]int, 0, k)
	sc, hs := make([]float64, 0, k), make([]float64, 0, k)
	for _, s := range scores {
		if int(s.CriterionIndex) != cr.Index || !s.Readable {
			continue
		}
		pos = append(pos, int(s.Label))
		sc = append(sc, s.Score)
		h := math.NaN()
		if i, ok := rowAt[s.RowID]; ok && cr.Samples[i].Human != nil {
			h = onScale(*cr.Samples[i].Human)
		}
		hs = append(hs, h)
	}
	if !rated {
		hs = nil
	}
	cr.Positions = stats.PositionEffect(pos, sc, hs)
}

// scoreFigure is what the figures before livemem45 read of one score
// (models.ScoreFigure until livemem47): no ids of its own or its run's,
// no analysis, the score as a value beside whether it was readable.
type scoreFigure struct {
	RowID, BatchID        int64
	Score                 float64 // meaningful when Readable
	CriterionIndex, Round int32
	Label                 int32
	Readable              bool
}

// countOfRunBefore counts a run's rows of model's table, so that the
// reads below allocate their arrays at their size as they did.
func countOfRunBefore(ctx context.Context, db *models.DB, model any, runID int64) (int, error) {
	var n int64
	if err := db.Reader(ctx).Model(model).Where("run_id = ?", runID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count the rows of run %d: %w", runID, err)
	}
	return int(n), nil
}

// listScoreFiguresBefore is models.ListScoreFigures as it was until
// livemem47 removed it: every score of a run in order of criterion,
// round and row, in an array allocated at its size.
func listScoreFiguresBefore(ctx context.Context, db *models.DB, runID int64) ([]scoreFigure, error) {
	n, err := countOfRunBefore(ctx, db, &models.RunScore{}, runID)
	if err != nil {
		return nil, err
	}
	ss := make([]scoreFigure, 0, n)
	rows, err := db.Reader(ctx).Model(&models.RunScore{}).Select([]string{"batch_id", "criterion_index", "round", "row_id", "label", "score"}).
		Where("run_id = ?", runID).Order("criterion_index, round, row_id").Rows()
	if err != nil {
		return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
	}
	defer rows.Close()
	var score sql.NullFloat64
	var ci, round, label int64
	for rows.Next() {
		var s scoreFigure
		if err := rows.Scan(&s.BatchID, &ci, &round, &s.RowID, &label, &score); err != nil {
			return nil, fmt.Errorf("read the scores of run %d: %w", runID, err)
		}
		s.CriterionIndex, s.Round, s.Label = int32(ci), int32(round), int32(label)
		s.Score, s.Readable = score.Float64, score.Valid
		ss = append(ss, s)
	}
	return ss, rows.Err()
}

// listBatchLayoutBefore is models.ListBatchLayout as it was until
// livemem47 removed it: every batch of a run in order with only its
// layout, in an array allocated at its size.
func listBatchLayoutBefore(ctx context.Context, db *models.DB, runID int64) ([]models.RunBatch, error) {
	n, err := countOfRunBefore(ctx, db, &models.RunBatch{}, runID)
	if err != nil {
		return nil, err
	}
	bs := make([]models.RunBatch, 0, n)
	err = db.Reader(ctx).Select([]string{"id", "run_id", "criterion_index", "round", "batch_index", "row_ids", "status"}).
		Where("run_id = ?", runID).Order("criterion_index, round, batch_index").Find(&bs).Error
	return bs, err
}
