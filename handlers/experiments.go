package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// listExperiments lists a project's experiments.
func (h *Handlers) listExperiments(c echo.Context) error {
	ctx := c.Request().Context()
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.DB.FindProject(ctx, h.workspaceID(c), pid)
	if err != nil {
		return err
	}
	show, filter := showFilter(c)
	es, err := h.DB.ListExperiments(ctx, h.workspaceID(c), p.ID, filter)
	if err != nil {
		return err
	}
	v := web.ExperimentsView{Page: page(c, "Experiments · "+p.Name), Project: p, Show: show}
	for _, e := range es {
		runs, err := h.DB.ListExperimentRuns(ctx, h.workspaceID(c), e.ID)
		if err != nil {
			return err
		}
		it := web.ExperimentListItem{Experiment: e, Runs: len(runs), Dataset: "(deleted dataset)"}
		for _, r := range runs {
			if !r.Finished() {
				it.Active++
			}
		}
		if d, err := h.DB.FindDataset(ctx, h.workspaceID(c), e.DatasetID); err == nil {
			it.Dataset = d.Name
		}
		v.Experiments = append(v.Experiments, it)
	}
	return render(c, http.StatusOK, web.ExperimentsPage(v))
}

// runFigures is what the comparison table needs of one run.
type runFigures struct {
	run    models.Run
	rep    *report.Report // nil before the first answer
	rows   int
	avgP   float64
	avgS   float64
	tokens float64  // per sample; NaN without rows
	cost   *float64 // per sample; nil when the price is unknown
	calls  int
	failed int // failed batches + unreadable scores + too few readable
	// unreadable are the run's missing scores whose judge answered: its
	// MissingScores less those of its failed calls, which the failed
	// batches already count, and less tooFew.
	unreadable int
	// tooFew are the run's scores left missing because too few of their
	// sampled answers could be read (Run.TooFewScores), counted apart
	// from the unreadable ones as the run page counts them.
	tooFew  int
	partial bool
	// cached is set when some of the run's calls were answered from the
	// answer cache: those calls cost nothing and their batches keep no
	// token counts, so what the run paid understates what the method
	// costs. Its tokens and cost per sample are never marked best, named
	// in the cost sentence or plotted. A run answered partly from the
	// cache shows what it paid (tokens, cost) beside how many calls that
	// covers; one answered wholly from it has none (NaN, nil) and shows
	// "cached".
	//
	// A run that kept what its cached answers cost when they were paid
	// for (models.Run.FullTokens) is not cached here: its tokens and cost
	// are those of all its calls, as if it had paid for every one, and
	// compare with the others (fromCache says so beside them).
	cached    bool
	fromCache bool
}

// figuresOf gathers a run's row of the comparison table. While a large
// finished run's summary is being prepared it returns the row without
// figures (rep nil) and the *preparingError.
func (h *Handlers) figuresOf(ctx context.Context, run models.Run) (runFigures, error) {
	f := runFigures{run: run, avgP: math.NaN(), avgS: math.NaN(), tokens: math.NaN(), calls: run.Calls,
		unreadable: run.MissingScores, partial: !run.Finished()}
	if run.BatchesFailed > 0 {
		// A failed batch's scores are missing too (Run.MissingScores),
		// but they are that batch's failure, not unreadable answers:
		// counting both counted one failure twice.
		noAnswer, err := h.DB.NoAnswerScores(ctx, run.ID)
		if err != nil {
			return f, err
		}
		f.unreadable = max(0, run.MissingScores-sumCounts(noAnswer))
	}
	f.tooFew = min(max(run.TooFewScores, 0), f.unreadable)
	f.unreadable -= f.tooFew
	f.failed = run.BatchesFailed + f.unreadable + f.tooFew
	if ds, err := h.DB.FindDataset(ctx, workspaceOf(ctx), run.DatasetID); err == nil {
		f.rows = ds.RowCount
	}
	var preparing error
	if run.BatchesDone > 0 {
		// The run's figures as the run page shows them: a finished run's
		// stored summary (no samples; the paired tests read the samples'
		// scores from storage when they need them, pairedScores).
		rep, err := h.runSummary(ctx, run.ID, report.Options{})
		switch {
		case preparingOf(err) != nil:
			// Counts and costs are shown meanwhile; the figures are not.
			preparing = err
		case err != nil:
			return f, err
		default:
			f.rep = rep
			f.avgP, f.avgS = averagePearson(rep), averageCoef(rep, func(c report.CriterionReport) float64 { return c.Spearman.Coef })
			if len(rep.Criteria) > 0 {
				f.rows = rep.Criteria[0].SampleCount
			}
		}
	}
	prompt, completion, full := run.FullTokens()
	f.cached = run.CachedCalls > 0 && !full
	f.fromCache = run.CachedCalls > 0 && full
	if f.cached && run.WhollyCached() {
		return f, preparing
	}
	if f.rows > 0 {
		f.tokens = float64(run.PromptTokens+run.CompletionTokens) / float64(f.rows)
		cost := run.CostSoFar()
		if f.fromCache {
			f.tokens = float64(prompt+completion) / float64(f.rows)
			cost = runner.Cost(run.JudgeSnapshot, prompt, completion)
		}
		if cost != nil && !run.Simulated {
			c := *cost / float64(f.rows)
			f.cost = &c
		}
	}
	return f, preparing
}

// averagePearson is the mean Pearson correlation over a report's criteria
// that have one; NaN when none has.
func averagePearson(rep *report.Report) float64 {
	return averageCoef(rep, func(c report.CriterionReport) float64 { return c.Pearson.Coef })
}

// averageCoef averages a figure over criteria, leaving out undefined ones,
// as the paper's "average" column does.
func averageCoef(rep *report.Report, of func(report.CriterionReport) float64) float64 {
	var sum float64
	var n int
	for _, c := range rep.Criteria {
		if v := of(c); !math.IsNaN(v) && !math.IsInf(v, 0) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// tableAverages is the experiment table's choice of the criteria its
// averages run over.
type tableAverages struct {
	// kept are the indexes of the criteria every compared run has a
	// Pearson r for; nil when fewer than two runs are compared, and then
	// each run is averaged over its own defined criteria.
	kept []int
	// names are those criteria's names.
	names []string
	// note says, under the table, which criteria were left out and why;
	// "" when none was.
	note string
}

// title is the hover text of an average cell.
func (a tableAverages) title(coef string) string {
	if a.kept == nil {
		return "mean of the criteria's " + coef
	}
	if len(a.kept) == 0 {
		return "no criterion has a Pearson r for every finished run"
	}
	return "mean of the " + coef + " over " + joinNames(a.names) + ", the criteria every finished run has a Pearson r for"
}

// isCompared tells whether a run's average is ranked against the
// others': a finished run that went through every call and has a
// Pearson r on some criterion. Reseeds and robustness variants count: their
// averages are set against their parent's.
func isCompared(f runFigures) bool {
	return f.run.Completed() && f.rep != nil && !math.IsNaN(averagePearson(f.rep))
}

// alignAverages averages every run of the table over the same criteria:
// those every compared run (isCompared) has a Pearson r for. Averaged each
// over its own defined criteria, a run with an undefined criterion (its
// scores or the ratings did not vary, too few samples) was ranked on an
// average over fewer criteria than the others, while the paired test of
// two runs averages over the criteria both have: a run could lead the
// table on an easier set than the test compared. It sets each run's avgP
// and avgS (the per-criterion figures stay as they are) and says which
// criteria were left out and why.
func alignAverages(figs []runFigures, names []string) tableAverages {
	var compared []runFigures
	for _, f := range figs {
		if isCompared(f) {
			compared = append(compared, f)
		}
	}
	var a tableAverages
	if len(compared) < 2 {
		return a
	}
	pearson := func(f runFigures, k int) float64 {
		if k >= len(f.rep.Criteria) || !f.rep.Criteria[k].HasHuman {
			return math.NaN()
		}
		return f.rep.Criteria[k].Pearson.Coef
	}
	a.kept = []int{}
	var left []string
	for k, name := range names {
		var lacking []string
		var reason string
		some := false
		for _, f := range compared {
			if v := pearson(f, k); !math.IsNaN(v) && !math.IsInf(v, 0) {
				some = true
				continue
			}
			lacking = append(lacking, f.run.Name)
			if reason == "" {
				reason = undefinedReason(f, k)
			} else if reason != undefinedReason(f, k) {
				reason = "no Pearson r"
			}
		}
		switch {
		case len(lacking) == 0:
			a.kept = append(a.kept, k)
			a.names = append(a.names, name)
		case some:
			// Undefined for every compared run: no run's average had it,
			// so leaving it out changes nothing and needs no word.
			left = append(left, fmt.Sprintf("%s (%s: %s)", name, joinNames(lacking), reason))
		}
	}
	for i := range figs {
		f := &figs[i]
		if f.rep == nil {
			continue
		}
		f.avgP = averageOver(f.rep, a.kept, func(c report.CriterionReport) float64 { return c.Pearson.Coef })
		f.avgS = averageOver(f.rep, a.kept, func(c report.CriterionReport) float64 { return c.Spearman.Coef })
	}
	switch {
	case len(left) == 0:
	case len(a.kept) == 0:
		a.note = fmt.Sprintf("No average is given: no criterion has a Pearson r for every finished run, and runs averaged over different criteria would not compare. %s. Each run's figure for each criterion stays in its column.",
			"Left out: "+strings.Join(left, "; "))
	default:
		a.note = fmt.Sprintf("Averages are over %s, the %s every finished run has a Pearson r for, so every run is ranked on the same criteria (and paired tests compare runs on them). Left out: %s. Each run's own figure for a left-out criterion stays in its column.",
			joinNames(a.names), plural(len(a.names), "criterion", "criteria"), strings.Join(left, "; "))
	}
	return a
}

// undefinedReason says why a compared run has no Pearson r for criterion k.
func undefinedReason(f runFigures, k int) string {
	switch {
	case k >= len(f.rep.Criteria):
		return "not judged"
	case !f.rep.Criteria[k].HasHuman:
		return "no human ratings"
	case f.rep.Criteria[k].Pearson.N < 3:
		return "fewer than 3 samples with a score and a rating"
	}
	return "the scores or the ratings do not vary, so no Pearson r"
}

// averageOver averages a figure over the criteria kept (its own defined
// ones when kept is nil), leaving out those undefined for the report (a
// run still going, or not compared); NaN when none is defined.
func averageOver(rep *report.Report, kept []int, of func(report.CriterionReport) float64) float64 {
	if kept == nil {
		return averageCoef(rep, of)
	}
	var sum float64
	var n int
	for _, k := range kept {
		if k >= len(rep.Criteria) || !rep.Criteria[k].HasHuman {
			continue
		}
		if v := of(rep.Criteria[k]); !math.IsNaN(v) && !math.IsInf(v, 0) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// showExperiment is the paper's Table 1 on the person's own data: one row
// per run with agreement per criterion, averages, tokens, cost, calls and
// failures, the best of each column marked, a summary and a chart.
func (h *Handlers) showExperiment(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	e, err := h.DB.FindExperiment(ctx, h.workspaceID(c), id)
	if err != nil {
		return err
	}
	v, err := h.experimentView(c, e, true)
	if err != nil {
		return err
	}
	v.Manage = manageFor(c, models.KindExperiment, e.ID, e.Name, e.ArchivedAt)
	return render(c, http.StatusOK, web.ExperimentPage(v))
}

// experimentView gathers an experiment's table, summary and chart (the
// experiment page's and the share link's), and with verdict the headline
// and its paired tests (only the experiment page shows them).
func (h *Handlers) experimentView(c echo.Context, e models.Experiment, verdict bool) (web.ExperimentView, error) {
	ctx := c.Request().Context()
	runs, err := h.DB.ListExperimentRuns(ctx, h.workspaceID(c), e.ID)
	if err != nil {
		return web.ExperimentView{}, err
	}
	v := web.ExperimentView{Page: page(c, e.Name), Experiment: e, Project: "Project", Dataset: "(deleted dataset)"}
	if p, err := h.DB.FindProject(ctx, h.workspaceID(c), e.ProjectID); err == nil {
		v.Project = p.Name
	}
	if d, err := h.DB.FindDataset(ctx, h.workspaceID(c), e.DatasetID); err == nil {
		v.Dataset = d.Name
	}
	figs := make([]runFigures, 0, len(runs))
	byID := map[int64]int{}
	var preparing *preparingError
	for _, r := range runs {
		f, err := h.figuresOf(ctx, r)
		if p := preparingOf(err); p != nil {
			// The other runs are shown; this one's figures are on their way.
			v.Preparing++
			if preparing == nil || p.lastFailed {
				preparing = p
			}
		} else if err != nil {
			return web.ExperimentView{}, err
		}
		byID[r.ID] = len(figs)
		figs = append(figs, f)
		if f.partial {
			v.Running++
		}
		if len(r.RubricSnapshot.Criteria) > len(v.Criteria) {
			v.Criteria = v.Criteria[:0]
			for _, c := range r.RubricSnapshot.Criteria {
				v.Criteria = append(v.Criteria, c.Name)
			}
		}
	}
	avg := alignAverages(figs, v.Criteria)
	v.AverageNote = avg.note
	v.Rows = experimentRows(figs, len(v.Criteria))
	for i := range v.Rows {
		v.Rows[i].AvgPearson.Title = avg.title("Pearson r")
		v.Rows[i].AvgSpearman.Title = avg.title("Spearman ρ")
	}
	for i, f := range figs {
		if f.run.ParentRunID == nil || !isRobustnessVariant(f.run.Variant) {
			continue
		}
		var parent *report.Report
		if k, ok := byID[*f.run.ParentRunID]; ok {
			parent = figs[k].rep
		} else if rep, err := h.runSummary(ctx, *f.run.ParentRunID, report.Options{}); err == nil {
			parent = rep
		}
		v.Rows[i].Robustness = robustnessLine(f, parent, avg.kept, v.Criteria)
	}
	switch {
	case preparing != nil:
		// No headline while a run's figures are missing: it could be the
		// best one.
		v.PreparingResults = preparingView(preparing)
	case verdict:
		if v.Verdict, err = h.experimentVerdict(ctx, figs, avg.kept); err != nil {
			return web.ExperimentView{}, err
		}
	}
	v.CachedNote = cachedNote(figs)
	v.HumansNote = humansNote(figs, v.Criteria, verdict)
	v.SimulatedNote = simulatedProcedureNote(figs)
	v.Summary = experimentSummary(figs)
	v.Chart, v.ChartNote = experimentChart(figs)
	return v, nil
}

// robustnessLine sets a reseed or robustness variant against its parent
// run (nil when its figures cannot be read). Both are averaged over the
// same criteria: those the table averages over (kept; every criterion
// when it has no list) that both runs have a Pearson r for. The parent's
// own average over all its criteria, beside a variant averaged over the
// table's shared criteria, read a difference in which criteria were
// averaged as a gain or loss. Criteria left out are named.
func robustnessLine(f runFigures, parent *report.Report, kept []int, names []string) string {
	parentID := *f.run.ParentRunID
	pearson := func(rep *report.Report, k int) float64 {
		if rep == nil || k >= len(rep.Criteria) || !rep.Criteria[k].HasHuman {
			return math.NaN()
		}
		return rep.Criteria[k].Pearson.Coef
	}
	// The parent's criterion of the same name: a parent outside the
	// experiment is not bound to the table's column order.
	parentPearson := func(k int) float64 {
		if parent == nil {
			return math.NaN()
		}
		for j, c := range parent.Criteria {
			if c.Criterion.Name == names[k] {
				return pearson(parent, j)
			}
		}
		return pearson(parent, k)
	}
	candidates := kept
	if candidates == nil {
		for k := range names {
			candidates = append(candidates, k)
		}
	}
	defined := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	// Correlations with other human ratings do not compare: a parent
	// recomputed with browser ratings read as a gain or loss of its noisy
	// copy, whose report still reads the imported column. Decided per
	// criterion: a criterion with no browser rating reads the same
	// ratings in both and still compares.
	var over, otherHumans, why []string
	var own, theirs float64
	for _, k := range candidates {
		a, b := pearson(f.rep, k), parentPearson(k)
		if !defined(a) || !defined(b) {
			continue
		}
		if j := parentIndex(parent, names[k], k); !report.SameCriterionHumans(f.rep, k, parent, j) {
			otherHumans = append(otherHumans, names[k])
			w := fmt.Sprintf("this run is measured against %s, run %d against %s", f.rep.CriterionShort(k), parentID, parent.CriterionShort(j))
			if !slices.Contains(why, w) {
				why = append(why, w)
			}
			continue
		}
		own += a
		theirs += b
		over = append(over, names[k])
	}
	humansWhy := strings.Join(why, "; ")
	if len(why) > 1 {
		// Say which criterion each description is of.
		why = why[:0]
		for _, k := range candidates {
			if j := parentIndex(parent, names[k], k); slices.Contains(otherHumans, names[k]) {
				why = append(why, fmt.Sprintf("on %s, this run is measured against %s, run %d against %s", names[k], f.rep.CriterionShort(k), parentID, parent.CriterionShort(j)))
			}
		}
		humansWhy = strings.Join(why, "; ")
	}
	if len(over) == 0 && len(otherHumans) > 0 {
		what := humansWhy + "; recompute one of them with the same human ratings"
		if f.run.Variant == runner.VariantReseed {
			return fmt.Sprintf("reseed of run %d: no comparison (%s)", parentID, what)
		}
		return fmt.Sprintf("%s: no comparison with run %d (%s)", f.run.Variant, parentID, what)
	}
	if len(over) == 0 {
		what := "no criterion has a Pearson r for both this run and run " + strconv.FormatInt(parentID, 10)
		if parent == nil {
			what = "the figures of run " + strconv.FormatInt(parentID, 10) + " cannot be read"
		}
		if f.run.Variant == runner.VariantReseed {
			return fmt.Sprintf("reseed of run %d: no comparison (%s)", parentID, what)
		}
		return fmt.Sprintf("%s: no comparison with run %d (%s)", f.run.Variant, parentID, what)
	}
	own /= float64(len(over))
	theirs /= float64(len(over))
	var left []string
	for _, n := range names {
		if !slices.Contains(over, n) {
			left = append(left, n)
		}
	}
	var others, unmeasured []string
	for _, n := range left {
		if slices.Contains(otherHumans, n) {
			others = append(others, n)
		} else {
			unmeasured = append(unmeasured, n)
		}
	}
	note := ""
	switch {
	case len(others) > 0 && len(unmeasured) > 0:
		note = fmt.Sprintf("; both averaged over %s, leaving out %s, which not every run compared has a Pearson r for, and %s, measured against other human ratings (%s)",
			joinNames(over), joinNames(unmeasured), joinNames(others), humansWhy)
	case len(others) > 0:
		note = fmt.Sprintf("; both averaged over %s, leaving out %s, measured against other human ratings (%s)", joinNames(over), joinNames(others), humansWhy)
	case len(left) > 0:
		note = fmt.Sprintf("; both averaged over %s, leaving out %s, which not every run compared has a Pearson r for", joinNames(over), joinNames(left))
	}
	if f.run.Variant == runner.VariantReseed {
		// A reseed measures repeatability: show where it falls in the
		// band of its setup, not a gain or loss.
		return fmt.Sprintf("reseed of run %d: average Pearson %s (the run itself: %s%s)", parentID, fmtNum(own, 3), fmtNum(theirs, 3), note)
	}
	line := fmt.Sprintf("%s: %s vs run %d", f.run.Variant, web.SignedCoef(own-theirs, 3), parentID)
	if note != "" {
		line += " (" + note[2:] + ")"
	}
	return line
}

// parentIndex is the index of the parent's criterion named name (k, the
// table's column, when it has none of that name or cannot be read).
func parentIndex(parent *report.Report, name string, k int) int {
	if parent != nil {
		for j, c := range parent.Criteria {
			if c.Criterion.Name == name {
				return j
			}
		}
	}
	return k
}

func isRobustnessVariant(v string) bool {
	return v == runner.VariantNoise || v == runner.VariantReworded || v == runner.VariantReseed
}

// Column directions for bestOf.
const (
	higherBetter = true
	lowerBetter  = false
)

// bestOf marks the best values of a column: the highest or the lowest,
// compared as displayed (rounded to digits), among eligible rows with a
// defined value. Nothing is marked when fewer than two rows compete or
// they are all equal, since "best" would then say nothing.
func bestOf(vals []float64, eligible []bool, digits int, higher bool) []bool {
	marks := make([]bool, len(vals))
	scale := math.Pow10(digits)
	best := math.NaN()
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for i, v := range vals {
		if !eligible[i] || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		r := math.Round(v * scale)
		n++
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if n < 2 || lo == hi {
		return marks
	}
	best = lo
	if higher {
		best = hi
	}
	for i, v := range vals {
		if eligible[i] && !math.IsNaN(v) && math.Round(v*scale) == best {
			marks[i] = true
		}
	}
	return marks
}

// experimentRows formats the table and marks the best of each column among
// the runs that succeeded (a running run's partial tokens and failures
// would otherwise win unfairly) and compete in the headline's ranking.
func experimentRows(figs []runFigures, criteria int) []web.ExperimentRow {
	eligible := make([]bool, len(figs))
	for i, f := range figs {
		// Reseeds measure the spread of their setup and robustness runs
		// judge altered samples or an altered rubric: as in the ranking
		// (isContender), neither is marked best.
		eligible[i] = f.run.Completed() && f.rep != nil && ownSetup(f)
	}
	column := func(of func(runFigures) float64) []float64 {
		out := make([]float64, len(figs))
		for i, f := range figs {
			out[i] = of(f)
		}
		return out
	}
	corr := func(f runFigures, k int, spearman bool) stats.Correlation {
		nan := stats.Correlation{Coef: math.NaN(), P: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
		if f.rep == nil || k >= len(f.rep.Criteria) || !f.rep.Criteria[k].HasHuman {
			return nan
		}
		if spearman {
			return f.rep.Criteria[k].Spearman
		}
		return f.rep.Criteria[k].Pearson
	}
	rows := make([]web.ExperimentRow, len(figs))
	for i, f := range figs {
		rows[i] = web.ExperimentRow{Run: f.run, MethodLabel: methods.Label(f.run.Method), Partial: f.partial,
			Pearson: make([]web.ExperimentCell, criteria), Spearman: make([]web.ExperimentCell, criteria)}
	}
	for k := range criteria {
		for _, sp := range []bool{false, true} {
			vals := column(func(f runFigures) float64 { return corr(f, k, sp).Coef })
			best := bestOf(vals, eligible, 3, higherBetter)
			for i, f := range figs {
				c := corr(f, k, sp)
				text := fmtNum(c.Coef, 3)
				if f.rep != nil && k < len(f.rep.Criteria) && f.rep.Criteria[k].HasHuman {
					// Measured but not a number (constant scores): say so,
					// rather than a dash that reads as "not yet".
					text = web.CoefText(c.Coef, 3)
				}
				cell := web.ExperimentCell{Text: text, Best: best[i], Title: ciTitle(c)}
				if sp {
					rows[i].Spearman[k] = cell
				} else {
					rows[i].Pearson[k] = cell
				}
			}
		}
	}
	avgP := column(func(f runFigures) float64 { return f.avgP })
	avgS := column(func(f runFigures) float64 { return f.avgS })
	tokens := column(func(f runFigures) float64 { return f.tokens })
	cost := column(func(f runFigures) float64 {
		if f.cost == nil {
			return math.NaN()
		}
		return *f.cost
	})
	calls := column(func(f runFigures) float64 { return float64(f.calls) })
	failed := column(func(f runFigures) float64 { return float64(f.failed) })
	bP, bS := bestOf(avgP, eligible, 3, higherBetter), bestOf(avgS, eligible, 3, higherBetter)
	// Cost compares to the hundredth of a cent: finer differences are noise
	// in token counts, not a reason to prefer a setup.
	// Tokens and cost compare only runs that paid for every call: a run
	// answered partly from the answer cache paid for fewer calls than its
	// method makes, so it would win for having been run before, not for
	// being cheaper.
	paidAll := make([]bool, len(figs))
	for i, f := range figs {
		paidAll[i] = eligible[i] && !f.cached
	}
	bT, bC := bestOf(tokens, paidAll, 0, lowerBetter), bestOf(cost, paidAll, 4, lowerBetter)
	bCalls, bF := bestOf(calls, eligible, 0, lowerBetter), bestOf(failed, eligible, 0, lowerBetter)
	for i, f := range figs {
		r := &rows[i]
		avgText := fmtNum
		if hasHuman(f.rep) {
			// Measured, but no criterion has a defined figure.
			avgText = web.CoefText
		}
		r.AvgPearson = web.ExperimentCell{Text: avgText(f.avgP, 3), Best: bP[i], Title: "mean of the criteria's Pearson r"}
		r.AvgSpearman = web.ExperimentCell{Text: avgText(f.avgS, 3), Best: bS[i], Title: "mean of the criteria's Spearman ρ"}
		r.Tokens = web.ExperimentCell{Text: fmtNum(f.tokens, 0), Best: bT[i],
			Title: fmt.Sprintf("%s prompt + %s completion tokens over %d samples", runCount(f.run.PromptTokens), runCount(f.run.CompletionTokens), f.rows)}
		r.Cost = web.ExperimentCell{Text: perSampleCost(f), Best: bC[i], Title: "total " + costText(f.run.Simulated, f.run.CostSoFar())}
		switch {
		case f.fromCache:
			// Every call's cost, the cached ones with the tokens they used when
			// first paid for, at the run's own prices.
			why := fullCostTitle(f.run)
			note := "as if every call were paid: " + cacheShareText(f.run)
			r.Tokens = web.ExperimentCell{Text: r.Tokens.Text, Best: r.Tokens.Best, Title: why, Note: note}
			if !f.run.Simulated {
				r.Cost = web.ExperimentCell{Text: r.Cost.Text, Best: r.Cost.Best, Title: why, Note: note}
			}
		case f.run.WhollyCached():
			why := cachedTitle(f.run)
			r.Tokens = web.ExperimentCell{Text: "cached", Title: why}
			if !f.run.Simulated {
				r.Cost = web.ExperimentCell{Text: "cached", Title: why}
			}
		case f.cached:
			// What it paid, said to be for part of its calls only.
			why, note := cachedTitle(f.run), "paid calls only: "+cacheShareText(f.run)
			r.Tokens = web.ExperimentCell{Text: r.Tokens.Text, Title: why, Note: note}
			if !f.run.Simulated {
				r.Cost = web.ExperimentCell{Text: r.Cost.Text, Title: why, Note: note}
			}
		}
		r.Calls = web.ExperimentCell{Text: runCount(f.calls), Best: bCalls[i]}
		r.Failures = web.ExperimentCell{Text: strconv.Itoa(f.failed), Best: bF[i],
			Title: failuresTitle(f)}
	}
	return rows
}

// failuresTitle says what a run's failures are made of: its failed
// batches, unreadable scores and, when it has any, scores missing for too
// few readable answers.
func failuresTitle(f runFigures) string {
	t := fmt.Sprintf("%d failed batches + %d unreadable scores", f.run.BatchesFailed, f.unreadable)
	if f.tooFew > 0 {
		t += fmt.Sprintf(" + %d with too few readable answers", f.tooFew)
	}
	return t
}

// simulatedProcedureNote says, when the simulated judge's BatchEval runs
// differ in their prompt's procedure (one, two or three stages), that its
// scores ignore it: those variants then score alike, which reads as a
// defect (found by newcomer QA); "" otherwise.
func simulatedProcedureNote(figs []runFigures) string {
	procedures := map[evaluator.Procedure]bool{}
	for _, f := range figs {
		if f.run.Simulated && f.run.Method == models.MethodBatchEval {
			procedures[f.run.Settings.Procedure] = true
		}
	}
	if len(procedures) < 2 {
		return ""
	}
	return "The simulated judge scores from text features and noise, whatever the prompt asks: runs that differ only in their procedure (one, two or three stages) get the same scores here. A language model's scores depend on it."
}

// cachedTitle explains why a run's tokens and cost per sample are not
// compared: what it paid is not what its method costs.
func cachedTitle(run models.Run) string {
	return fmt.Sprintf("%s of %s calls were answered from the answer cache of earlier runs, which costs nothing, so what this run paid (%s tokens, total %s) is less than its method costs",
		runCount(run.CachedCalls), runCount(run.Calls), runCount(run.PromptTokens+run.CompletionTokens), costText(run.Simulated, run.CostSoFar()))
}

// fullCostTitle explains the figures of a run that took answers from the
// answer cache and kept what they cost when paid for.
func fullCostTitle(run models.Run) string {
	prompt, completion, _ := run.FullTokens()
	return fmt.Sprintf("%s of %s calls were answered from the answer cache of earlier runs: counted with the tokens they used when first paid for, at the prices of this run (%s tokens in all, %s without the cache); this run paid %s for %s tokens",
		runCount(run.CachedCalls), runCount(run.Calls), runCount(prompt+completion), costText(run.Simulated, runner.Cost(run.JudgeSnapshot, prompt, completion)),
		costText(run.Simulated, run.CostSoFar()), runCount(run.PromptTokens+run.CompletionTokens))
}

// cachedNote explains, under the table, the tokens and cost of the runs
// answered from the answer cache; "" when there are none.
func cachedNote(figs []runFigures) string {
	partly, wholly := false, false
	full := false
	for _, f := range figs {
		partly = partly || (f.cached && f.run.PartlyCached())
		wholly = wholly || (f.cached && f.run.WhollyCached())
		full = full || f.fromCache
	}
	note := ""
	if wholly {
		note = `"cached" tokens and cost: every call of the run was answered from the answer cache of earlier runs, which costs nothing, so the run says nothing of what its method costs.`
	}
	if partly {
		if note != "" {
			note += " "
		}
		note += "A run answered partly from the answer cache shows what it paid, for the calls the cache did not answer: less than its method costs, so its tokens and cost are not marked best, not compared in the cost sentence and not plotted."
	}
	if full {
		if note != "" {
			note += " "
		}
		note += `"as if every call were paid": the run's calls answered from the answer cache are counted with the tokens they used when first paid for, at the run's own prices, so its tokens and cost are its method's and compare with the others.`
	}
	return note
}

// humansNote says that the experiment's runs are measured against
// different human ratings on some criteria (report.SameCriterionHumans:
// one recomputed with browser ratings, others on the imported column),
// naming the criteria and which runs read which there; "" when every run
// with figures reads the same on every criterion it has ratings on. Their correlation
// columns then differ partly by the ratings, and the headline's paired
// tests measure every run against the best run's ratings. Without the
// headline (verdict false: the share link and the downloaded report,
// read by people who may have no account) it names no paired tests and
// no recompute button, only who can make the runs comparable.
func humansNote(figs []runFigures, names []string, verdict bool) string {
	lead := humansNoteLead(figs, names)
	if lead == "" {
		return ""
	}
	if !verdict {
		return lead + "Their correlations then differ partly because of the ratings, not the judges, so this table does not compare the judges alone. " +
			"To compare them, whoever runs this experiment in BatchEval can recompute the runs with the same human ratings and share it again."
	}
	return lead +
		"Their correlations then differ partly because of the ratings, not the judges, and the headline's paired tests measure every run against the ratings of the run it names best. " +
		"To compare them, recompute the runs with the same human ratings (on each run's page, under Human ratings)."
}

// humansNoteLead is the note's first sentences: on which criteria the runs
// read different human ratings, and which each reads there; "" when they
// read the same on every criterion they have ratings on.
func humansNoteLead(figs []runFigures, names []string) string {
	// Per criterion (the table's columns, by position as its cells are):
	// the runs grouped by the ratings they read on it, runs without any
	// rating on it left out (they have no correlation to set against the
	// others'). A criterion is named when two groups read ratings.
	type group struct {
		rep   *report.Report
		names []string
	}
	var described []string // how the runs differ on a criterion, once per wording
	var crits [][]string   // the criteria described alike
	for ci, name := range names {
		var groups []*group
		for _, f := range figs {
			if f.rep == nil || !f.rep.CriterionHasHumans(ci) {
				continue
			}
			var g *group
			for _, x := range groups {
				if report.SameCriterionHumans(x.rep, ci, f.rep, ci) {
					g = x
					break
				}
			}
			if g == nil {
				g = &group{rep: f.rep}
				groups = append(groups, g)
			}
			g.names = append(g.names, web.Quoted(f.run.Name))
		}
		if len(groups) < 2 {
			continue
		}
		parts := make([]string, len(groups))
		for i, g := range groups {
			parts[i] = joinNames(g.names) + " against " + g.rep.CriterionShort(ci)
		}
		d := strings.Join(parts, "; ")
		if k := slices.Index(described, d); k >= 0 {
			crits[k] = append(crits[k], name)
			continue
		}
		described, crits = append(described, d), append(crits, []string{name})
	}
	if len(described) == 0 {
		return ""
	}
	lead := "These runs are measured against different human ratings"
	for i, d := range described {
		if i > 0 {
			lead += " On"
		} else {
			lead += " on"
		}
		lead += " " + joinNames(crits[i]) + ": " + d + "."
	}
	lead += " "
	return lead
}

// cacheShareText says how many of a run's calls the answer cache answered.
func cacheShareText(run models.Run) string {
	return fmt.Sprintf("%s of %s calls answered from the answer cache", runCount(run.CachedCalls), runCount(run.Calls))
}

// perSampleCost is the cost per sample: "unknown" without prices, $0 only
// for the simulated judge.
func perSampleCost(f runFigures) string {
	switch {
	case f.run.Simulated:
		return "$0 (simulated)"
	case f.cost == nil:
		return "unknown"
	}
	return dollars(*f.cost)
}

// dollars shows a cost per sample with enough digits to tell setups apart
// (web.MoneyPerSample: three significant digits below a dollar of the
// amount the exports write, to the nano-dollar).
func dollars(v float64) string { return web.MoneyPerSample(v) }

// fmtNum writes a figure of the experiment page's sentences, titles and
// chart (a coefficient, its interval, an average) as its table does
// (web.CoefText): a figure just below zero is 0.000, not "−0.000"; a dash
// when it is not a number.
func fmtNum(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return web.CoefText(v, digits)
}

func ciTitle(c stats.Correlation) string {
	if math.IsNaN(c.CILow) || math.IsNaN(c.CIHigh) {
		return "no 95% interval"
	}
	// The bounds as the run page prints them (web.SignedCoef's rounding,
	// stats.CoefDecimal), without its sign for positive figures.
	bound := func(v float64) string { return web.CoefText(v, 3) }
	title := fmt.Sprintf("95%% interval %s to %s over %d samples", bound(c.CILow), bound(c.CIHigh), c.N)
	// As under the run page's interval: how many resamples it is from
	// when some were left out.
	if note := stats.ResamplesNote(c.Resamples, c.ResamplesUsed); note != "" {
		title += ", " + note
	}
	return title
}

// runCount writes an integer with thousands separators.
func runCount(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return web.Minus("-") + runCount(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// experimentSummary says what the run with the highest average Pearson
// costs, and what the strongest run of another method costs in comparison.
// Whether that run is really better is the verdict's business
// (experimentVerdict): this sentence names no winner. Only succeeded runs
// of their own setup count (no reseed or robustness variants), and only
// runs whose cost is measured: a run answered partly from the answer
// cache paid less than its method costs, so the sentence leaves it out and
// says so when it agreed better than the run named.
func experimentSummary(figs []runFigures) string {
	counts := func(f runFigures) bool {
		return f.run.Completed() && !math.IsNaN(f.avgP) && ownSetup(f)
	}
	ok := func(f runFigures) bool { return counts(f) && !f.cached }
	best := -1
	for i, f := range figs {
		if ok(f) && (best < 0 || f.avgP > figs[best].avgP) {
			best = i
		}
	}
	if best < 0 {
		some := ""
		for _, f := range figs {
			if counts(f) && f.run.PartlyCached() {
				some = "some or all of "
			}
		}
		for _, f := range figs {
			if counts(f) {
				// Every run with figures was answered from the cache.
				return "Cost: not known for these runs: " + some + "their calls were answered from the answer cache of earlier runs, which costs nothing, so what they paid is less than their methods cost."
			}
		}
		return ""
	}
	b := figs[best]
	var left []string
	var partly []runFigures
	for _, f := range figs {
		if counts(f) && f.cached && f.avgP > b.avgP {
			left = append(left, f.run.Name)
			if f.run.PartlyCached() {
				partly = append(partly, f)
			}
		}
	}
	note := ""
	switch {
	case len(partly) == 1 && len(left) == 1:
		note = fmt.Sprintf(" (%s is left out: %s, so what it paid is less than its method costs.)", left[0], cacheShareText(partly[0].run))
	case len(partly) > 0:
		note = fmt.Sprintf(" (%s are left out: some or all of their calls were answered from the answer cache of earlier runs, so what they paid is less than their methods cost.)", joinNames(left))
	case len(left) > 0:
		note = fmt.Sprintf(" (%s %s left out: %s calls were answered from the answer cache of earlier runs, so %s cost is not known.)",
			joinNames(left), plural(len(left), "is", "are"), plural(len(left), "its", "their"), plural(len(left), "its", "their"))
	}
	// The rival is the strongest run of another method, as the paper sets
	// BatchEval's cost against the strongest baseline; another run of the
	// same method only when no other method ran.
	pick := func(otherMethod bool) int {
		k := -1
		for i, f := range figs {
			if i == best || !ok(f) || (f.run.Method != b.run.Method) != otherMethod {
				continue
			}
			if k < 0 || f.avgP > figs[k].avgP {
				k = i
			}
		}
		return k
	}
	rival := pick(true)
	if rival < 0 {
		rival = pick(false)
	}
	s := fmt.Sprintf("Cost: %s (average Pearson %s)", b.run.Name, fmtNum(b.avgP, 2))
	switch {
	case b.run.Simulated:
		s += fmt.Sprintf(" uses %s tokens per sample (simulated judge, so no cost)", fmtNum(b.tokens, 0))
	case b.cost == nil:
		s += fmt.Sprintf(" uses %s tokens per sample (cost unknown: the judge has no prices)", fmtNum(b.tokens, 0))
	default:
		s += " costs " + dollars(*b.cost) + " per sample"
	}
	if rival < 0 {
		return s + "." + note
	}
	r := figs[rival]
	s += fmt.Sprintf("; %s (average Pearson %s)", r.run.Name, fmtNum(r.avgP, 2))
	if b.cost != nil && r.cost != nil && *b.cost > 0 {
		return s + fmt.Sprintf(" costs %s× as much per sample.", ratio(*r.cost / *b.cost)) + note
	}
	if b.tokens > 0 && !math.IsNaN(r.tokens) {
		return s + fmt.Sprintf(" uses %s× as many tokens per sample.", ratio(r.tokens/b.tokens)) + note
	}
	return s + "." + note
}

// ratio writes how many times as much: one decimal below 10, none from
// there, rounded as web.Decimal rounds (half away from zero on the
// decimal: 500 tokens against 400 is 1.3×, as a reader dividing the
// exported figures rounds 1.25, not 1.2× as the float rounded to even).
func ratio(v float64) string {
	if v >= 10 {
		return web.Decimal(v, 0)
	}
	return web.Decimal(v, 1)
}

// experimentChart plots cost per sample (or tokens per sample when any
// cost is unknown or simulated) against average Pearson, one labelled
// point per run with a figure.
func experimentChart(figs []runFigures) (web.ScatterChart, string) {
	useCost := true
	var plotted []runFigures
	cached := 0
	for _, f := range figs {
		if f.cached && !math.IsNaN(f.avgP) {
			cached++
		}
		if math.IsNaN(f.avgP) || math.IsNaN(f.tokens) || f.cached {
			continue
		}
		plotted = append(plotted, f)
		if f.cost == nil {
			useCost = false
		}
	}
	ch := web.ScatterChart{XLabel: "tokens per sample", YLabel: "average Pearson"}
	note := "Across: tokens per sample, because the cost of some runs is unknown or simulated. Up: average Pearson with your ratings. Up and to the left is better."
	if useCost {
		ch.XLabel = "cost per sample (US$)"
		note = "Across: cost per sample. Up: average Pearson with your ratings. Up and to the left is better."
	}
	if cached > 0 {
		// Plotted at what they paid, they would sit far to the left.
		note += fmt.Sprintf(" %s answered partly or wholly from the answer cache of earlier runs %s not shown: what %s paid is less than %s method costs.",
			plural(cached, "One run", runCount(cached)+" runs"), plural(cached, "is", "are"), plural(cached, "it", "they"), plural(cached, "its", "their"))
	}
	if len(plotted) == 0 {
		return ch, ""
	}
	x := func(f runFigures) float64 {
		if useCost {
			return *f.cost
		}
		return f.tokens
	}
	ch.XLo, ch.XHi = 0, 0
	for _, f := range plotted {
		ch.XHi = math.Max(ch.XHi, x(f))
	}
	for _, f := range plotted {
		label := f.run.Name
		if f.partial {
			label += " (partial)"
		}
		xs := fmtNum(f.tokens, 0) + " tokens"
		if useCost {
			xs = dollars(*f.cost)
		}
		ch.Points = append(ch.Points, web.ScatterPoint{X: x(f), Y: f.avgP, Label: label,
			Href:  templ.SafeURL(runURL(f.run.ID)),
			Title: fmt.Sprintf("%s: average Pearson %s, %s per sample", f.run.Name, fmtNum(f.avgP, 3), xs)})
	}
	return ch, note
}

// hasHuman tells whether a report has a criterion with human ratings.
func hasHuman(rep *report.Report) bool {
	if rep == nil {
		return false
	}
	for _, c := range rep.Criteria {
		if c.HasHuman {
			return true
		}
	}
	return false
}
