// Package report turns a run's stored scores into what people read: final
// scores per sample, agreement with the human ratings, score distribution,
// single round versus ensemble, batch bias, and the exports. It is shared by
// the pages, the exports and the command line.
package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// bootstrapSeed fixes the resampling so a report reads the same every time.
const bootstrapSeed = 20240101

// histogramBins: ten bins resolve decimal scores well on a [1, 3] or [1, 5]
// range without leaving most bins empty for 30-sample datasets.
const histogramBins = 10

// entropyBinWidth bins decimal scores to tenths for the entropy, as the
// scores are asked with one decimal.
const entropyBinWidth = 0.1

// Report is everything the results page and the exports show of a run.
type Report struct {
	Run       models.Run
	Dataset   models.Dataset
	Simulated bool
	Criteria  []CriterionReport
	// Humans says which human ratings the report used (humansource.go).
	Humans HumanUse
	// Events are what happened to the run's execution that its counters
	// do not show (a lost lease, a takeover, a late count), oldest first:
	// the JSON export's envelope.events. StreamJSON reads them; a report
	// built without them exports none.
	Events []models.RunEvent
	// GEvalSources counts how a G-Eval run's scores were estimated (from
	// log-probabilities or sampled answers): the JSON export's
	// run.geval_sources. StreamJSON reads them for G-Eval runs; nil
	// otherwise, and the export leaves the key out.
	GEvalSources *models.GEvalSources
	// SampledAnswers counts, per criterion index, the sampled answers
	// behind the scores of a method that samples (CloserLook, G-Eval's
	// sampling) and the unreadable ones: the JSON export's
	// criteria[].sampled_answers. StreamJSON reads them; nil otherwise.
	SampledAnswers map[int]models.SampledAnswers
}

// CriterionReport holds one criterion's results and meta-evaluation.
type CriterionReport struct {
	Index     int
	Criterion evaluator.Criterion
	Samples   []SampleResult // dataset order
	HasHuman  bool
	Pearson   stats.Correlation
	Spearman  stats.Correlation
	Kendall   stats.Correlation
	// Reading is a plain-language reading of the Pearson figure.
	Reading       string
	Histogram     []stats.Bin
	Entropy       float64
	Rounds        []RoundStat
	MeanBatchBias float64
	Decomposition stats.Decomposition
	// DecompositionNote says how to read the decomposition, and whether the
	// human and judge scales are comparable.
	DecompositionNote string
	// HumanScaleNote says how the human ratings were put on the judge's
	// scale for the errors (the samples' differences, the position table
	// and the decomposition, all alike: see humanOnJudgeScale); empty
	// without human ratings.
	HumanScaleNote string
	// HumanScale is the span the human ratings are mapped from onto the
	// criterion's scale for the errors, when they are mapped (the same
	// decision as HumanScaleNote): a chart of judge against human draws
	// its human axis over it, so that its ends line up with the judge's.
	HumanScale      HumanScale
	Scored, Missing int
	// NoAnswer are the Missing round scores whose judge call failed: no
	// answer came, so none could be read. The rest of Missing are
	// unreadable answers (Unreadable).
	NoAnswer int
	// TooFew are the Missing round scores of a sampling method's units
	// whose readable answers were some but fewer than the run's fewest
	// readable answers for a score (evaluator.MethodSettings.MinReadable):
	// answers came and some were read, but too few to score from. Counted
	// apart from NoAnswer and Unreadable.
	TooFew int
	// UnreadableRate is the share of the answered round scores that the
	// judge's answers did not yield (unreadable / (scored + unreadable)),
	// itself a quality metric of the judge; a failed call is no answer and
	// counts in neither part, as on the run page.
	UnreadableRate float64
	// GroupColumn and Grouped: correlation computed within each group of
	// the column (e.g. per source document) and averaged.
	GroupColumn string
	Grouped     map[stats.Method]stats.Grouped
	// SystemColumn and System: the correlation of per-system mean judge
	// scores with per-system mean human ratings, the systems being the
	// values of the column (e.g. FED's "system"); empty and nil when the
	// dataset has no system column or the criterion no human ratings.
	SystemColumn string
	System       map[stats.Method]stats.SystemLevel
	// Interval says how the 95% intervals of Pearson, Spearman and Kendall
	// were computed: bootstrap up to stats.AnalyticAbove pairs, Fisher z
	// above (IntervalLabel puts it in words); empty without human ratings.
	Interval stats.IntervalMethod
	// Ceiling is the inter-annotator agreement, when the dataset has
	// several annotators' ratings; nil otherwise.
	Ceiling *Ceiling
	// AnnotatorColumns are the per-annotator rating keys the ceiling was
	// computed from (nil without a ceiling), for the report's provenance.
	AnnotatorColumns []string
	// Positions is the mean score and error by position inside batches
	// (BatchEval only: sample-wise methods have one position).
	Positions []stats.PositionStat
	// SampleCount is the number of samples (len(Samples) on a full
	// report), MissingSamples those with at least one unreadable round:
	// set on summaries (LoadSummary) too, whose Samples are nil.
	SampleCount, MissingSamples int
	// Scatter is the judge-versus-human chart's digest (drawn points, span,
	// counts); nil without human ratings.
	Scatter *ScatterDigest
}

// Unreadable is the number of round scores whose judge's answer came but
// could not be read: Missing less NoAnswer and TooFew.
func (c CriterionReport) Unreadable() int { return c.Missing - c.NoAnswer - c.TooFew }

// RoundStat compares one round alone with the ensemble of rounds so far.
type RoundStat struct {
	Round     int // 1-based
	Single    stats.Correlation
	Ensemble  stats.Correlation
	BatchBias float64
}

// SampleResult is one sample's outcome on one criterion.
//
// A running run's figures hold one a sample and criterion (a million at
// the live bound), so it is kept small (livemem45b): the position and the
// counts are int32 (a dataset's rows and a run's rounds are far fewer than
// 2^31), 112 bytes where it was 128.
type SampleResult struct {
	RowID      int64
	ExternalID string
	Fields     []evaluator.Text
	Final      *float64   // mean of the readable round scores; nil when none
	Rounds     []*float64 // nil = unreadable in that round
	Human      *float64
	// AbsDiff is |final - human|, the human rating put on the criterion's
	// scale as CriterionReport.HumanScaleNote says (humanOnJudgeScale).
	AbsDiff *float64
	// Position is the row's place in its dataset (models.DatasetRow.Position).
	Position int32
	// Missing counts the rounds without a score, NoAnswer those of them
	// whose call failed, TooFew those whose unit read too few of its
	// sampled answers (CriterionReport.TooFew); the rest are unreadable
	// answers.
	Missing, NoAnswer, TooFew int32
}

// Options change what a report computes.
type Options struct {
	// GroupColumn overrides the dataset's group column for grouped correlation.
	GroupColumn string
	// SystemColumn names the column that says which system produced each
	// sample, for system-level correlation. Empty means the dataset's
	// usual system column (DefaultSystemColumn); NoSystem turns it off.
	SystemColumn string
	// Recomputed, if set, is called for each criterion whose stored
	// statistics (correlations with bootstrap intervals, system level)
	// were computed afresh rather than read from storage.
	Recomputed func(criterion int)
	// Reviews, when set, are the run's browser reviews as the request
	// already read them (ReadBrowserReviews): the report and its stored
	// summary's key read them from here, not again. nil reads them.
	Reviews *BrowserReviews

	// memo carries stored statistics in and fresh ones out (BuildWith).
	memo *statsMemo
	// tooFew are the run's units whose score is missing for too few
	// readable answers (models.TooFewReadableUnits), by batch id; BuildWith
	// reads them.
	tooFew map[int64]bool
	// figuresOnly builds the report without the samples' texts
	// (SampleResult.Fields nil): BuildWith reads of the rows only what the
	// figures need (models.ListDatasetRowFigures). storeSummary sets it:
	// neither the summary nor the stored per-sample results hold texts,
	// and a large run's texts were most of the memory its figures took.
	figuresOnly bool
	// ownRows says the rows handed to computeFigures are the report's
	// own (BuildWith read them): once every criterion's human ratings
	// are taken out of them, their ratings maps are dropped (livemem46).
	ownRows bool
}

// batchFigure is what the figures read of a batch (models.BatchFigure).
type batchFigure = models.BatchFigure

// layoutOf is what the figures read of batches; the row ids are shared.
func layoutOf(batches []models.RunBatch) []batchFigure { return models.BatchFiguresOf(batches) }

// NoSystem as Options.SystemColumn computes no system-level correlation.
const NoSystem = "-"

// systemColumnNames are the column names that say which system produced a
// sample in the datasets this product is used with: FED's "system",
// USR Topical-Chat's "system_id". Matched without regard to case.
var systemColumnNames = []string{"system", "system_id", "system_name"}

// DefaultSystemColumn picks the system column of a dataset from its column
// names, the first of "system", "system_id" and "system_name" present
// (ignoring case); "" when there is none.
func DefaultSystemColumn(columns []string) string {
	for _, want := range systemColumnNames {
		for _, c := range columns {
			if strings.EqualFold(c, want) {
				return c
			}
		}
	}
	return ""
}

// Build computes the report of a run from the database.
func Build(ctx context.Context, db *models.DB, wsID, runID int64) (*Report, error) {
	return BuildWith(ctx, db, wsID, runID, Options{})
}

// BuildWith is Build with options.
func BuildWith(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
	// The rows it reads are its own: their ratings maps may go once read
	// (Options.ownRows).
	opt.ownRows = true
	return buildWith(ctx, db, wsID, runID, opt)
}

// buildWith is BuildWith; the rows' ratings maps are dropped while the
// figures are computed when opt.ownRows says (BenchmarkLiveFigureMemory
// compares it with and without).
func buildWith(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
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
	var rows []models.DatasetRow
	if opt.figuresOnly {
		rows, err = db.ListDatasetRowFigures(ctx, ds.ID, []string{ds.GroupColumn, systemColumn(opt, ds)})
	} else {
		rows, err = db.ListDatasetRows(ctx, ds.ID, 0, 0)
	}
	if err != nil {
		return nil, err
	}
	// Only what the figures read: no prompts, answers or analyses. Each
	// criterion's scores and batches are read when it is computed
	// (criterionReads), so only one criterion's are held at a time.
	run, rows, use, err := applyHumanSource(ctx, db, wsID, run, rows, opt.Reviews)
	if err != nil {
		return nil, err
	}
	if opt.memo, err = loadStats(ctx, db, run.ID); err != nil {
		return nil, err
	}
	done := make([]bool, len(run.RubricSnapshot.Criteria)) // the criteria whose every batch is done or failed
	read := func(ci int) (criterionReads, error) {
		return readCriterion(ctx, db, run, ci, done)
	}
	rep, err := computeFigures(run, ds, rows, read, opt)
	if err != nil {
		return nil, err
	}
	rep.Humans = use
	if err := withSampleWiseCounts(ctx, db, rep); err != nil {
		return nil, err
	}
	// A finished run's figures are stored, and while a run goes on those
	// of its criteria whose every call has come back (finishedCriteria):
	// their inputs no longer change, so the next view of the running run
	// reads their intervals instead of resampling. A running criterion's
	// change with every answer and are not stored. The stored figures
	// carry the hash of the scores and ratings they came from, so a
	// change of human source (or a retried call) computes them again.
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

// criterionReads are what the figures of one criterion read of a run:
// its scores, its batches' layout and the run's units left without a
// score for too few readable answers (Options.tooFew).
type criterionReads struct {
	scores  models.RunScoreValues
	batches []batchFigure
	tooFew  map[int64]bool
}

// readCriterion reads criterion ci's scores, then its batches, then the
// units with too few answers, in the order BuildWith read them for the
// whole run before livemem45 (a batch done between two reads is not taken
// for finished with scores missing), and marks done[ci] when every batch
// of the criterion is done or failed.
func readCriterion(ctx context.Context, db *models.DB, run models.Run, ci int, done []bool) (criterionReads, error) {
	var d criterionReads
	var err error
	if d.scores, err = db.ListCriterionScoreValues(ctx, run.ID, ci); err != nil {
		return d, err
	}
	if d.batches, err = db.ListCriterionBatchFigures(ctx, run.ID, ci, len(d.scores.Scores)); err != nil {
		return d, err
	}
	if d.tooFew, err = tooFewUnits(ctx, db, run); err != nil {
		return d, err
	}
	if ci < len(done) {
		done[ci] = finishedCriteria(d.batches, len(done))[ci]
	}
	return d, nil
}

// finishedCriteria marks the criteria of a run (of n) that have batches
// and whose every batch is done or failed: no answer is still to come.
func finishedCriteria(batches []batchFigure, n int) []bool {
	done := make([]bool, n)
	open := make([]bool, n)
	for _, b := range batches {
		if b.CriterionIndex < 0 || int(b.CriterionIndex) >= n {
			continue
		}
		done[b.CriterionIndex] = true
		if b.Status != models.BatchDone && b.Status != models.BatchFailed {
			open[b.CriterionIndex] = true
		}
	}
	for i := range done {
		done[i] = done[i] && !open[i]
	}
	return done
}

// BuildFigures is BuildWith without the samples' texts (SampleResult.Fields
// nil): of the dataset's rows it reads what the figures need
// (models.ListDatasetRowFigures: ids, positions, ratings and the group and
// system columns), never their texts. A running run's pages build their
// report on every view; they read the texts of the few samples they show
// by key (WithTexts).
func BuildFigures(ctx context.Context, db *models.DB, wsID, runID int64, opt Options) (*Report, error) {
	opt.figuresOnly = true
	return BuildWith(ctx, db, wsID, runID, opt)
}

// WithTexts fills in the texts of samples of rep (a report built by
// BuildFigures), reading their rows by key; a sample whose row is gone is
// left without text.
func WithTexts(ctx context.Context, db *models.DB, rep *Report, samples []SampleResult) error {
	if len(samples) == 0 {
		return nil
	}
	ids := make([]int64, len(samples))
	for i, s := range samples {
		ids[i] = s.RowID
	}
	rows, err := db.FindDatasetRows(ctx, rep.Run.DatasetID, ids)
	if err != nil {
		return err
	}
	fields := sampleFields(rep)
	for i := range samples {
		if row, ok := rows[samples[i].RowID]; ok {
			samples[i].Fields = row.Sample(fields).Fields
		}
	}
	return nil
}

// withRubricScales is the run with each criterion's rubric range recorded
// where the method judged it on a scale of its own and the run, stored
// before LLM-Eval kept that range (Criterion.RubricScale), does not: it
// is read from the rubric version the run records (models.RunHumanScale),
// so humanOnJudgeScale maps the human ratings from it. A criterion whose
// range cannot be told is left as it is. The run's criteria are copied;
// nothing stored changes.
func withRubricScales(ctx context.Context, db *models.DB, run models.Run) (models.Run, error) {
	crits := run.RubricSnapshot.Criteria
	copied := false
	var scales []evaluator.Scale
	var refused []error
	for i, c := range crits {
		if c.RubricScale != nil {
			continue
		}
		if scales == nil {
			var err error
			if scales, refused, err = db.RunHumanScales(ctx, run); err != nil {
				return run, err
			}
		}
		if refused[i] != nil {
			continue
		}
		scale := scales[i]
		if scale.Lo == c.Lo && scale.Hi == c.Hi {
			continue
		}
		if !copied {
			crits = append(crits[:0:0], crits...)
			copied = true
		}
		crits[i].RubricScale = &scale
	}
	run.RubricSnapshot.Criteria = crits
	return run, nil
}

// systemColumn is the column a report of ds with opt reads each sample's
// system from; "" for none.
func systemColumn(opt Options, ds models.Dataset) string {
	switch opt.SystemColumn {
	case "":
		return DefaultSystemColumn(ds.Columns)
	case NoSystem:
		return ""
	}
	return opt.SystemColumn
}

// tooFewUnits are run's units whose score was left missing for too few
// readable answers, by id; nil for a run that stored no minimum (every
// run from before the setting, every method that does not sample).
func tooFewUnits(ctx context.Context, db *models.DB, run models.Run) (map[int64]bool, error) {
	if run.MethodSettings.MinReadableShare == nil || !methods.SamplesAnswers(methods.For(run.Method)) {
		return nil, nil
	}
	ids, err := db.TooFewReadableUnits(ctx, run.ID)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// Compute builds the report from loaded data (no database access).
func Compute(run models.Run, ds models.Dataset, rows []models.DatasetRow, batches []models.RunBatch, scores []models.RunScore) *Report {
	return ComputeWith(run, ds, rows, batches, scores, Options{})
}

// ComputeWith is Compute with options; the group column is the dataset's
// (BuildWith applies Options.GroupColumn to it).
func ComputeWith(run models.Run, ds models.Dataset, rows []models.DatasetRow, batches []models.RunBatch, scores []models.RunScore, opt Options) *Report {
	all := criterionReads{scores: models.ScoreValuesOf(scores), batches: layoutOf(batches), tooFew: opt.tooFew}
	// Nothing read can fail: every criterion reads from all.
	rep, _ := computeFigures(run, ds, rows, func(int) (criterionReads, error) { return all, nil }, opt)
	return rep
}

// computeFigures is ComputeWith over what the figures read of the scores
// and batches. Each criterion reads only its own spans of scores, and its
// temporaries are allocated at their size (livemem45): grown by
// appending, they were most of what a million-sample computation
// allocated.
func computeFigures(run models.Run, ds models.Dataset, rows []models.DatasetRow, read func(ci int) (criterionReads, error), opt Options) (*Report, error) {
	system := systemColumn(opt, ds)
	rep := &Report{Run: run, Dataset: ds, Simulated: run.Simulated}
	fields := run.RubricSnapshot.Fields
	if len(fields) == 0 {
		fields = ds.Fields
	}
	n := run.Settings.Rounds
	method := methods.For(run.Method)
	// rowAt[rowID] is the row's place in rows, which is its sample's in
	// every criterion's Samples: one map for the report, not one a
	// criterion and figure.
	rowAt := placesOf(rows)
	// humans[ci][g] is row g's human rating of criterion ci (nil when it
	// has none) and annotators[ci] the criterion's annotator columns
	// (models.AnnotatorColumns), taken before any criterion is computed:
	// when the rows are the report's own and no criterion has the two
	// annotators an agreement ceiling reads (ceilingOf), each row's
	// ratings map (about 280 bytes a row whose ratings no other row
	// shares, as with continuous ratings) is then dropped for the whole
	// computation (livemem46); the samples point at the same values.
	humans := make([][]*float64, len(run.RubricSnapshot.Criteria))
	annotators := make([][]string, len(run.RubricSnapshot.Criteria))
	ceilings := false
	for ci, crit := range run.RubricSnapshot.Criteria {
		crit, meanOf := comparedHuman(crit, ds)
		annotators[ci] = models.AnnotatorColumns(crit.HumanColumn, crit.AnnotatorColumns, rows)
		ceilings = ceilings || len(annotators[ci]) >= 2
		col := make([]*float64, len(rows))
		for g, row := range rows {
			switch {
			case meanOf != nil:
				col[g] = models.AnnotatorMean(row, meanOf)
			case crit.HumanColumn != "":
				if h, ok := row.Ratings[crit.HumanColumn]; ok && h != nil && !math.IsNaN(*h) {
					// The row's own rating, not a copy: nothing writes
					// through either (8 bytes and an allocation a sample,
					// livemem45b).
					col[g] = h
				}
			}
		}
		humans[ci] = col
	}
	if opt.ownRows && !ceilings {
		for i := range rows {
			rows[i].Ratings = nil
		}
	}
	var judged, unanswered, short []bool
	for ci, crit := range run.RubricSnapshot.Criteria {
		d, err := read(ci)
		if err != nil {
			return nil, err
		}
		scores, batches := d.scores, d.batches
		// A score row of a failed batch got no answer: its call failed.
		failed := map[int64]bool{}
		for _, b := range batches {
			if b.Status == models.BatchFailed {
				failed[b.ID] = true
			}
		}
		// The criterion as its samples are compared with a human (its
		// annotators' mean, comparedHuman).
		crit, _ = comparedHuman(crit, ds)
		// grid holds the rows' rounds, row k's at grid[k*n:(k+1)*n] (k its
		// place in rows, rowAt), and is the samples' Rounds: one array a
		// criterion, not a slice a sample. The readable scores' values
		// are in vals, which grid points into. judged marks rounds that
		// have an answer, so rounds not yet judged are not counted as
		// unreadable; unanswered marks those whose call failed, short
		// those of a unit that read too few answers.
		// The criterion's spans of scores, rounds of the run only.
		spans := criterionSpans(scores.Spans, ci, n)
		readable := 0
		for _, sp := range spans {
			for _, s := range scores.Scores[sp.Start:sp.End] {
				if s.Readable {
					readable++
				}
			}
		}
		vals := make([]float64, 0, readable)
		grid := make([]*float64, len(rows)*n)
		// The marks are the criterion's only while its samples are
		// made: one set for every criterion.
		if judged == nil {
			judged, unanswered, short = make([]bool, len(rows)*n), make([]bool, len(rows)*n), make([]bool, len(rows)*n)
		} else {
			clear(judged)
			clear(unanswered)
			clear(short)
		}
		for _, sp := range spans {
			for i := sp.Start; i < sp.End; i++ {
				s := scores.Scores[i]
				k, ok := rowAt.find(s.RowID)
				if !ok {
					continue // a score of no row the report shows
				}
				at := k*n + int(sp.Round)
				grid[at] = nil
				if s.Readable {
					vals = append(vals, s.Score)
					grid[at] = &vals[len(vals)-1]
				}
				judged[at] = true
				unanswered[at], short[at] = false, false
				if !s.Readable {
					b := scores.UnreadableBatch[i]
					unanswered[at], short[at] = failed[b], d.tooFew[b]
				}
			}
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
			sr.Human = humans[ci][g]
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
		// The position effect reads the scores and the samples' human
		// ratings only: computed first, the criterion's scores go before
		// its other figures are computed (one fewer array live at the
		// peak).
		fillPositions(&cr, rowAt, scores)
		scores, d.scores = models.RunScoreValues{}, models.RunScoreValues{}
		fillCriterion(&cr, run, batches, rowAt, stored, pre)
		fillExtras(&cr, ds, rows, annotators[ci])
		fillSystem(&cr, system, rows, stored, pre)
		fillScatter(&cr)
		if !stored {
			opt.memo.record(key, hash, criterionStats{Pearson: cr.Pearson, Spearman: cr.Spearman, Kendall: cr.Kendall,
				SystemColumn: cr.SystemColumn, System: cr.System, Interval: cr.Interval})
			if opt.Recomputed != nil {
				opt.Recomputed(ci)
			}
		}
		rep.Criteria = append(rep.Criteria, cr)
	}
	return rep, nil
}

// comparedHuman is crit as its samples are compared with a human: a
// criterion with annotator columns and no human column is compared with
// its annotators' mean (models.WithAnnotatorMean, which Build applies with
// the human source; here for the rows of a caller that did not), whose
// columns meanOf then names; nil otherwise.
func comparedHuman(crit evaluator.Criterion, ds models.Dataset) (_ evaluator.Criterion, meanOf []string) {
	if models.MeansAnnotators(crit) {
		meanOf = crit.AnnotatorColumns
		crit.HumanColumn = models.AnnotatorMeanKeyAmong(meanOf, func(k string) bool { return slices.Contains(ds.RatingColumns, k) })
	}
	return crit, meanOf
}

// rowPlaces finds a row's place in the report's rows by its id. Rows read
// in the order of their positions have ids in that order too when they
// were imported at once (the usual case): then the rows themselves are
// searched, which takes no memory, where a map took 20 to 40 bytes a row
// (livemem45); otherwise a map is made. Reads in the order of the rows
// (the scores of a round, a batch's rows) find the next row first.
type rowPlaces struct {
	rows []models.DatasetRow
	// by is the map when the rows' ids are not increasing.
	by map[int64]int
	// next is where the last id found was followed.
	next int
}

func placesOf(rows []models.DatasetRow) *rowPlaces {
	p := &rowPlaces{rows: rows}
	for i := 1; i < len(rows); i++ {
		if rows[i].ID <= rows[i-1].ID {
			p.by = make(map[int64]int, len(rows))
			for k, r := range rows {
				p.by[r.ID] = k
			}
			return p
		}
	}
	return p
}

// find is the place of the row with id, and whether there is one.
func (p *rowPlaces) find(id int64) (int, bool) {
	if p.by != nil {
		k, ok := p.by[id]
		return k, ok
	}
	if p.next < len(p.rows) && p.rows[p.next].ID == id {
		p.next++
		return p.next - 1, true
	}
	k, ok := slices.BinarySearchFunc(p.rows, id, func(r models.DatasetRow, id int64) int { return cmp.Compare(r.ID, id) })
	if ok {
		p.next = k + 1
	}
	return k, ok
}

// criterionSpans are the spans of criterion ci among spans, in their
// order; with rounds >= 0 only those of rounds 0 to rounds-1.
func criterionSpans(spans []models.ScoreSpan, ci, rounds int) []models.ScoreSpan {
	var out []models.ScoreSpan
	for _, sp := range spans {
		if int(sp.Criterion) != ci || rounds >= 0 && (sp.Round < 0 || int(sp.Round) >= rounds) {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// fillScatter adds the sample counts and the scatter's digest.
func fillScatter(cr *CriterionReport) {
	cr.SampleCount = len(cr.Samples)
	for _, s := range cr.Samples {
		if s.Missing > 0 {
			cr.MissingSamples++
		}
	}
	if !cr.HasHuman {
		return
	}
	paired := 0
	for _, s := range cr.Samples {
		if s.Final != nil && s.Human != nil {
			paired++
		}
	}
	xs, ys := make([]float64, 0, paired), make([]float64, 0, paired)
	plotted := make([]int, 0, paired) // plotted[i] is the index in cr.Samples of point i
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

// fillCriterion computes a criterion's figures; with stored set, the
// correlations and their intervals are pre's instead of computed.
func fillCriterion(cr *CriterionReport, run models.Run, batches []batchFigure, place *rowPlaces, stored bool, pre criterionStats) {
	crit := cr.Criterion
	n := run.Settings.Rounds
	finals := make([]*float64, len(cr.Samples))
	humans := make([]*float64, len(cr.Samples))
	scored := 0
	for _, s := range cr.Samples {
		if s.Final != nil {
			scored++
		}
	}
	finalVals := make([]float64, 0, scored)
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
		cs := Agreement(xs, ys)
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
	// The criterion's batches, and room for their scores and means: every
	// batch's are slices of biasScores and biasMeans, allBias holds them
	// all, a round's are roundBias's part of it (in the order they were
	// appended to lists before livemem45, so the same sums).
	// Batch bias is a figure of a method that judges samples together: a
	// method that judges each sample alone (G-Eval, LLM-Eval, CloserLook)
	// has none, its one-sample "batches" sitting by definition on their
	// final scores. It is missing (null in the export) for every criterion
	// of such a run, as the pages leave it out, where it read 0 for a
	// criterion with units of its own and null for LLM-Eval's later
	// criteria, whose one call a sample is stored under the first.
	batched := methods.For(run.Method).Batched()
	var mine []batchFigure
	slots, inRounds := 0, 0
	for _, b := range batches {
		if !batched || int(b.CriterionIndex) != cr.Index || b.Round < 0 || int(b.Round) >= n {
			continue
		}
		if mine == nil {
			mine = make([]batchFigure, 0, len(batches))
		}
		mine = append(mine, b)
		slots += len(b.RowIDs)
		inRounds++
	}
	biasScores, biasMeans := make([]float64, 0, slots), make([]float64, 0, slots)
	allBias := make([]stats.BatchScores, 0, inRounds)
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
		first := len(allBias)
		for _, b := range mine {
			if int(b.Round) != r {
				continue
			}
			start := len(biasScores)
			for _, id := range b.RowIDs {
				i, ok := place.find(id)
				if !ok {
					continue
				}
				v, m := cr.Samples[i].Rounds[r], cr.Samples[i].Final
				if v == nil || m == nil {
					continue
				}
				biasScores = append(biasScores, *v)
				biasMeans = append(biasMeans, *m)
			}
			if end := len(biasScores); end > start {
				allBias = append(allBias, stats.BatchScores{Scores: biasScores[start:end:end], Means: biasMeans[start:end:end]})
			}
		}
		if roundBias := allBias[first:]; len(roundBias) > 0 {
			rs.BatchBias = stats.MeanBatchBias(roundBias)
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
		// Each sample's readable rounds are a slice of one array.
		rated, values := 0, 0
		for _, s := range cr.Samples {
			if s.Human == nil {
				continue
			}
			k := 0
			for _, v := range s.Rounds {
				if v != nil {
					k++
				}
			}
			if k > 0 {
				rated++
				values += k
			}
		}
		flat := make([]float64, 0, values)
		rounds := make([][]float64, 0, rated)
		hs := make([]float64, 0, rated)
		for _, s := range cr.Samples {
			if s.Human == nil {
				continue
			}
			start := len(flat)
			for _, v := range s.Rounds {
				if v != nil {
					flat = append(flat, *v)
				}
			}
			if len(flat) == start {
				continue
			}
			rounds = append(rounds, flat[start:len(flat):len(flat)])
			hs = append(hs, onScale(*s.Human))
		}
		cr.Decomposition = stats.Decompose(rounds, hs)
		cr.DecompositionNote = "Error of the averaged score = mean error of single rounds − spread between rounds: accurate rounds and diverse rounds both help. " + cr.HumanScaleNote
	} else {
		cr.Decomposition = stats.Decomposition{EnsembleErr: math.NaN(), MeanRoundErr: math.NaN(), MeanVariance: math.NaN()}
		cr.DecompositionNote = "Needs human ratings."
	}
}

// humanOnJudgeScale decides, once per criterion, how human ratings that
// lie between hlo and hhi are put on the criterion's scale before they are
// subtracted from judge scores, and says so in a note for the page.
//
// A criterion the method judged on a scale of its own (LLM-Eval's 0 to 5
// or 0 to 100) records the rubric's range (Criterion.RubricScale; for an
// older run BuildWith reads it from the rubric version the run records),
// and that range is the scale people rate on: ratings within it are mapped
// linearly from it onto the judge's (the rubric's 1 to 3 onto 0 to 5: 1
// becomes 0, 3 becomes 5), exactly, whatever the observed extremes.
// Ratings outside the rubric's range are not on it: they are mapped from
// their lowest and highest values, as below.
//
// Otherwise the judge's scale is the rubric's, which does not state the
// humans' scale, so:
//   - ratings within the criterion's range are taken as given: a rubric
//     whose range is the human scale (FED's 1 to 3, averaged annotators
//     included) is the common case, and stretching the observed lowest and
//     highest ratings onto the range would let one extreme rating move
//     every error. Ratings spanning little of the range are still taken as
//     given, with a caution that they may be on a scale of their own;
//   - ratings outside the range are on another scale: they are mapped
//     linearly from their observed lowest and highest values onto the
//     range (the only scale there is to read), and the note says the
//     errors then depend on those two extremes.
func humanOnJudgeScale(hlo, hhi float64, crit evaluator.Criterion) (func(float64) float64, string) {
	asGiven := func(h float64) float64 { return h }
	judge := fmtScale(crit.Lo) + " to " + fmtScale(crit.Hi)
	if rs := crit.RubricScale; rs != nil && rs.Hi > rs.Lo && (rs.Lo != crit.Lo || rs.Hi != crit.Hi) {
		rubric := fmtScale(rs.Lo) + " to " + fmtScale(rs.Hi)
		if hlo >= rs.Lo-1e-9 && hhi <= rs.Hi+1e-9 {
			return func(h float64) float64 { return stats.Rescale(h, rs.Lo, rs.Hi, crit.Lo, crit.Hi) },
				fmt.Sprintf("The errors compare the judge's scores with the human ratings on the rubric's %s mapped linearly onto the judge's %s (%s becomes %s, %s becomes %s).",
					rubric, judge, fmtScale(rs.Lo), fmtScale(crit.Lo), fmtScale(rs.Hi), fmtScale(crit.Hi))
		}
		if !(hhi > hlo) {
			return asGiven, fmt.Sprintf("The human ratings (all %s) lie outside the rubric's %s and are compared as given with the judge's %s: compare the errors between runs, not as absolute values.", fmtScale(hlo), rubric, judge)
		}
		return func(h float64) float64 { return stats.Rescale(h, hlo, hhi, crit.Lo, crit.Hi) },
			fmt.Sprintf("The human ratings (%s to %s) lie outside the rubric's %s, so for the errors they are mapped linearly from their lowest and highest values onto the judge's %s (%s becomes %s, %s becomes %s): one extreme rating moves every error, so compare them between runs, not as absolute values.",
				fmtScale(hlo), fmtScale(hhi), rubric, judge, fmtScale(hlo), fmtScale(crit.Lo), fmtScale(hhi), fmtScale(crit.Hi))
	}
	switch {
	case hlo < crit.Lo-1e-9 || hhi > crit.Hi+1e-9:
		if !(hhi > hlo) {
			return asGiven, fmt.Sprintf("The human ratings (all %s) lie outside the judge's %s, so the errors compare two scales: compare them between runs, not as absolute values.", fmtScale(hlo), judge)
		}
		return func(h float64) float64 { return stats.Rescale(h, hlo, hhi, crit.Lo, crit.Hi) },
			fmt.Sprintf("The human ratings (%s to %s) lie outside the judge's %s, so for the errors they are mapped linearly from their lowest and highest values onto it (%s becomes %s, %s becomes %s): one extreme rating moves every error, so compare them between runs, not as absolute values.",
				fmtScale(hlo), fmtScale(hhi), judge, fmtScale(hlo), fmtScale(crit.Lo), fmtScale(hhi), fmtScale(crit.Hi))
	case hhi-hlo < narrowHumanSpan*(crit.Hi-crit.Lo) && !(hhi > hlo):
		// One value has no span to speak of ("span only 1.5 to 1.5").
		return asGiven, fmt.Sprintf("The errors compare the human ratings as given with the judge's scores. The human ratings are all %s, within the judge's %s: if they were given on another scale, the errors mix two scales, so compare them between runs, not as absolute values.",
			fmtScale(hlo), judge)
	case hhi-hlo < narrowHumanSpan*(crit.Hi-crit.Lo):
		return asGiven, fmt.Sprintf("The errors compare the human ratings as given with the judge's scores. The human ratings span only %s to %s of the judge's %s: if they were given on another scale, the errors mix two scales, so compare them between runs, not as absolute values.",
			fmtScale(hlo), fmtScale(hhi), judge)
	}
	return asGiven, fmt.Sprintf("The errors compare the human ratings as given with the judge's scores: they lie within the judge's %s.", judge)
}

// HumanScale is how a criterion's human ratings are put on its scale for
// the errors: taken as given (Mapped false), or mapped linearly from Lo to
// Hi onto the criterion's Lo to Hi. Name says what Lo to Hi is: "the
// rubric's 1 to 3", or "the ratings' 0.5 to 3.5" (their lowest and
// highest values).
type HumanScale struct {
	Mapped bool
	Lo, Hi float64
	Name   string
}

// humanScaleOf is humanOnJudgeScale's decision as a HumanScale.
func humanScaleOf(hlo, hhi float64, crit evaluator.Criterion) HumanScale {
	if rs := crit.RubricScale; rs != nil && rs.Hi > rs.Lo && (rs.Lo != crit.Lo || rs.Hi != crit.Hi) {
		if hlo >= rs.Lo-1e-9 && hhi <= rs.Hi+1e-9 {
			return HumanScale{Mapped: true, Lo: rs.Lo, Hi: rs.Hi, Name: "the rubric's " + fmtScale(rs.Lo) + " to " + fmtScale(rs.Hi)}
		}
	} else if !(hlo < crit.Lo-1e-9 || hhi > crit.Hi+1e-9) {
		return HumanScale{}
	}
	if !(hhi > hlo) {
		return HumanScale{}
	}
	return HumanScale{Mapped: true, Lo: hlo, Hi: hhi, Name: "the ratings' " + fmtScale(hlo) + " to " + fmtScale(hhi)}
}

// narrowHumanSpan is the share of the judge's range below which human
// ratings that span it are said to be maybe on another scale.
const narrowHumanSpan = 0.75

// fmtScale writes a scale end as the notes do: 1, 0.5.
func fmtScale(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// SortSamples orders samples by key ("score", "human", "diff", "missing",
// "position"); missing values always sort last, ties keep their order.
func SortSamples(ss []SampleResult, key string, desc bool) {
	less := sampleLess(key, desc)
	sort.SliceStable(ss, func(i, j int) bool { return less(&ss[i], &ss[j]) })
}

// SampleOrder is SortSamples's order of the samples keep accepts (all of
// them when keep is nil), as indexes into ss, which it leaves as they are:
// a cached report keeps its orders without copies of its samples.
func SampleOrder(ss []SampleResult, key string, desc bool, keep func(*SampleResult) bool) []int32 {
	idx := make([]int32, 0, len(ss))
	for i := range ss {
		if keep == nil || keep(&ss[i]) {
			idx = append(idx, int32(i))
		}
	}
	less := sampleLess(key, desc)
	sort.SliceStable(idx, func(i, j int) bool { return less(&ss[idx[i]], &ss[idx[j]]) })
	return idx
}

// sampleLess is SortSamples's order (and the stored ranks', summary.go).
func sampleLess(key string, desc bool) func(a, b *SampleResult) bool {
	val := func(s *SampleResult) (float64, bool) {
		switch key {
		case "score":
			return deref(s.Final)
		case "human":
			return deref(s.Human)
		case "diff":
			return deref(s.AbsDiff)
		case "missing":
			return float64(s.Missing), true
		default:
			return float64(s.Position), true
		}
	}
	return func(sa, sb *SampleResult) bool {
		a, aok := val(sa)
		b, bok := val(sb)
		if !aok || !bok {
			return aok && !bok
		}
		if desc {
			return a > b
		}
		return a < b
	}
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// fillExtras adds the unreadable rate, grouped correlation and the human
// ceiling (fillPositions the position effect) over the annotator columns
// cols (models.AnnotatorColumns of the criterion, read by computeFigures
// before the rows' ratings may be dropped).
func fillExtras(cr *CriterionReport, ds models.Dataset, rows []models.DatasetRow, cols []string) {
	if answered := cr.Scored + cr.Unreadable(); answered > 0 {
		cr.UnreadableRate = float64(cr.Unreadable()) / float64(answered)
	}
	if ds.GroupColumn != "" && cr.HasHuman {
		cr.GroupColumn = ds.GroupColumn
		// Every sample, a missing score or rating as NaN: GroupedCorrelation
		// leaves such pairs out but still sees their group, so a group none
		// of whose samples has both (every score unreadable, no rating) is
		// counted among the skipped groups (too small), where it vanished
		// from the counts ("0 groups, 2 skipped" on 3 groups).
		xs, ys := make([]float64, len(cr.Samples)), make([]float64, len(cr.Samples))
		gs := make([]string, len(cr.Samples))
		for i, s := range cr.Samples {
			xs[i], ys[i] = math.NaN(), math.NaN()
			if s.Final != nil {
				xs[i] = *s.Final
			}
			if s.Human != nil {
				ys[i] = *s.Human
			}
			gs[i] = rows[i].Data[ds.GroupColumn]
		}
		cr.Grouped = map[stats.Method]stats.Grouped{}
		for _, m := range stats.Methods() {
			cr.Grouped[m] = stats.GroupedCorrelation(m, xs, ys, gs)
		}
	}
	cr.Ceiling = ceilingOf(cols, rows, cr.Samples, cr.Pearson)
	if cr.Ceiling != nil {
		cr.AnnotatorColumns = cols
	}
}

// fillPositions adds the position effect: label k in a batch is position
// k. It reads the samples' human ratings and the scores, nothing the
// other figures compute.
func fillPositions(cr *CriterionReport, rowAt *rowPlaces, scores models.RunScoreValues) {
	// Human ratings are
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
	// Every round's scores count here, not only the run's rounds: the
	// criterion's spans whatever their round.
	spans := criterionSpans(scores.Spans, cr.Index, -1)
	k := 0
	for _, sp := range spans {
		for _, s := range scores.Scores[sp.Start:sp.End] {
			if s.Readable {
				k++
			}
		}
	}
	pos := make([]int, 0, k)
	sc, hs := make([]float64, 0, k), make([]float64, 0, k)
	for _, sp := range spans {
		for _, s := range scores.Scores[sp.Start:sp.End] {
			if !s.Readable {
				continue
			}
			pos = append(pos, int(s.Label))
			sc = append(sc, s.Score)
			h := math.NaN()
			if i, ok := rowAt.find(s.RowID); ok && cr.Samples[i].Human != nil {
				h = onScale(*cr.Samples[i].Human)
			}
			hs = append(hs, h)
		}
	}
	if !rated {
		hs = nil
	}
	cr.Positions = stats.PositionEffect(pos, sc, hs)
}

// fillSystem adds the system-level correlation when the criterion has human
// ratings and the rows name their system in column.
func fillSystem(cr *CriterionReport, column string, rows []models.DatasetRow, stored bool, pre criterionStats) {
	if column == "" || !cr.HasHuman {
		return
	}
	if stored {
		cr.SystemColumn, cr.System = pre.SystemColumn, pre.System
		return
	}
	var xs, ys []float64
	var systems []string
	for i, s := range cr.Samples {
		sys, ok := rows[i].Data[column]
		if s.Final == nil || s.Human == nil || !ok || sys == "" {
			continue
		}
		xs, ys = append(xs, *s.Final), append(ys, *s.Human)
		systems = append(systems, sys)
	}
	if len(systems) == 0 {
		return
	}
	cr.SystemColumn = column
	cr.System = map[stats.Method]stats.SystemLevel{}
	for _, m := range stats.Methods() {
		cr.System[m] = stats.SystemCorrelation(m, xs, ys, systems, stats.DefaultResamples, bootstrapSeed)
	}
}

// IntervalLabel says in words how the criterion's correlation intervals
// were computed, e.g. "bootstrap (1000 resamples)" or "Fisher z (large
// sample)"; empty when there are none.
func (cr *CriterionReport) IntervalLabel() string {
	return cr.Interval.Label(stats.DefaultResamples)
}
