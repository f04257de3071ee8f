package handlers

import (
	"context"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// completionTokensPerSample is the estimate's assumption for the judge's
// answer: a two- or three-sentence analysis plus the score, per sample and
// round. Real answers vary with the judge and the procedure.
const completionTokensPerSample = 60

// samplesPerPage keeps the run page light on large datasets.
const samplesPerPage = 50

// liveReportSamples bounds the samples (dataset rows times criteria) of a
// run whose figures a request waits to be built: a finished run's summary
// not stored yet (finishedSummary) and a running derived run's change in
// agreement (relatedRuns). Larger ones are built in the background, or
// shown once finished. It no longer bounds the run page's provisional
// figures (liveFiguresMaxSamples).
const liveReportSamples = 20_000

// liveFiguresMaxSamples bounds the samples of a running run whose page
// shows provisional figures; a larger one shows them when it finishes.
// It protects memory, not the view (views never wait for a computation,
// liveFiguresFor): one computation of a million samples (two rounds)
// peaked at 846 MiB of heap, 892 MiB resident, on SQLite (BENCHMARKS.md,
// livebig44: BenchmarkLiveFigureMemory), and the last figures are kept
// beside the next while it is computed, so two million samples (a
// million rows, two criteria) would take about twice that at once on the
// small servers this runs on. Up to 20,000 before livebig44, when a
// computation held every score and batch whole (1,223 MiB at a million).
// Since livemem45 (one criterion's scores and batches read at a time) a
// million peaks at 460-525 MiB of heap, of which the figures themselves
// keep 183 MiB: the bound stays, because the figures grow with the
// samples whatever the reads, and a computation of a million still takes
// 9-28 s on two loaded cores (BENCHMARKS.md, livemem45).
const liveFiguresMaxSamples = 1_000_000

// liveFiguresCap is liveFiguresMaxSamples, or the test's bound.
func (h *Handlers) liveFiguresCap() int {
	if h.liveMaxSamples > 0 {
		return h.liveMaxSamples
	}
	return liveFiguresMaxSamples
}

// liveSamples is the samples a running run's partial report would hold
// (rows times criteria); 0 for a finished run.
func liveSamples(run models.Run, rows int) int {
	if run.Finished() {
		return 0
	}
	return rows * max(1, len(run.RubricSnapshot.Criteria))
}

// ---- launch form ----

func runURL(id int64) string { return "/runs/" + strconv.FormatInt(id, 10) }

// ---- list and run page ----

// runsPerPage keeps the runs list light: each finished run's agreement
// comes from its report.
const runsPerPage = 25

// runStatuses are the run states the runs list filters on, in the order
// a run goes through them.
var runStatuses = []string{models.RunQueued, models.RunRunning, models.RunPaused, models.RunSucceeded, models.RunFinishedWithGaps, models.RunFailed, models.RunCancelled}

func (h *Handlers) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	show, filter := showFilter(c)
	f := web.RunsFilter{Show: show, Status: c.QueryParam("status"), Method: c.QueryParam("method")}
	if !slices.Contains(runStatuses, f.Status) {
		f.Status = ""
	}
	if _, err := methods.Lookup(f.Method); err != nil {
		f.Method = ""
	}
	if id, err := strconv.ParseInt(c.QueryParam("dataset"), 10, 64); err == nil && id > 0 {
		f.Dataset = id
	}
	v := web.RunsView{Page: page(c, "Runs"), Show: show, Filter: f}
	for _, st := range runStatuses {
		v.Statuses = append(v.Statuses, web.RunsOption{Value: st, Label: models.RunStatusLabel(st)})
	}
	for _, m := range methods.All() {
		v.Methods = append(v.Methods, web.RunsOption{Value: string(m.Name()), Label: m.Label()})
	}
	// The filters and the page are read in the database: a workspace of
	// thousands of runs reads the page's runs, not every run
	// (TestRunsListReadsItsPage).
	dsIDs, err := h.DB.RunDatasetIDs(ctx, ws, models.RunFilter{}, filter)
	if err != nil {
		return err
	}
	// Their names in one statement, not one a dataset.
	names, err := h.datasetNames(ctx, ws, dsIDs)
	if err != nil {
		return err
	}
	for _, id := range dsIDs {
		v.Datasets = append(v.Datasets, web.RunsOption{Value: strconv.FormatInt(id, 10), Label: names[id]})
	}
	slices.SortStableFunc(v.Datasets, func(a, b web.RunsOption) int { return strings.Compare(a.Label, b.Label) })
	if v.All, err = h.DB.CountRuns(ctx, ws, models.RunFilter{}, filter); err != nil {
		return err
	}
	kept := models.RunFilter{Status: f.Status, Method: f.Method, DatasetID: f.Dataset}
	v.Total = v.All
	if kept != (models.RunFilter{}) {
		if v.Total, err = h.DB.CountRuns(ctx, ws, kept, filter); err != nil {
			return err
		}
	}
	v.Pages = max(1, (v.Total+runsPerPage-1)/runsPerPage)
	v.At = 1
	if p, err := strconv.Atoi(c.QueryParam("page")); err == nil && p > 1 {
		v.At = min(p, v.Pages)
	}
	runs, err := h.DB.ListRunsPage(ctx, ws, kept, (v.At-1)*runsPerPage, runsPerPage, filter)
	if err != nil {
		return err
	}
	if v.Runs, err = h.runListItems(ctx, runs, names); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunsPage(v))
}

// findRun reads the :id parameter and the run it names, shown to the
// request's reader (showsRefusedAddrs).
func (h *Handlers) findRun(c echo.Context) (models.Run, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Run{}, err
	}
	run, err := h.DB.FindRun(c.Request().Context(), h.workspaceID(c), id)
	run.ShowAddrs = showsRefusedAddrs(c.Request().Context())
	return run, err
}

// showsRefusedAddrs reports whether the request's reader may read the
// address a judge call was refused at, where a refusal stored in local
// mode names it (models.Run.ShowAddrs): only the local user, that is the
// operator of a loopback server while no account exists, decided now and
// not when the run failed. Everyone else (members once accounts exist,
// tokens, share links) reads the refusal without it; the server's log
// keeps it (refused_address).
func showsRefusedAddrs(ctx context.Context) bool { return principalOf(ctx).Kind == LocalUser }

func (h *Handlers) showRun(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	noAnswer, causes, err := h.runFailures(ctx, run)
	if err != nil {
		return err
	}
	v := web.RunView{Page: page(c, run.Name), Run: run, Progress: runProgress(run, sumCounts(noAnswer), time.Now()), Manage: manageFor(c, models.KindRun, run.ID, run.Name, run.ArchivedAt),
		NoAnswer: noAnswer, Failures: causes,
		ProjectURL: "/projects/" + strconv.FormatInt(run.ProjectID, 10), Project: "Project", Dataset: "(deleted dataset)", Rubric: rubricLabel(run)}
	if p, err := h.DB.FindProject(ctx, h.workspaceID(c), run.ProjectID); err == nil {
		v.Project = p.Name
	}
	if v.Events, err = h.DB.RunEvents(ctx, run.ID); err != nil {
		return err
	}
	if d, err := h.DB.FindDataset(ctx, h.workspaceID(c), run.DatasetID); err == nil {
		v.Dataset, v.DatasetID = d.Name, d.ID
	}
	if run.RubricID != nil {
		if r, err := h.DB.FindRubric(ctx, h.workspaceID(c), *run.RubricID); err == nil {
			v.Rubric, v.RubricID = r.Name, r.ID
		}
	}
	v.MethodLabel = methods.Label(run.Method)
	if v.Unreadable, err = h.unreadableExamples(ctx, run, true); err != nil {
		return err
	}
	v.CanAlign = alignProblem(run) == ""
	if d, err := h.DB.FindDataset(ctx, h.workspaceID(c), run.DatasetID); err == nil {
		v.RowCount = d.RowCount
		v.DefaultGroup, v.RatingColumns = d.GroupColumn, d.RatingColumns
		v.Group = pickGroup(c.QueryParam("group"), d.Columns, d.GroupColumn)
		v.DefaultSystem = report.DefaultSystemColumn(d.Columns)
		v.SystemQuery = pickSystem(c.QueryParam("system"), d.Columns)
		v.Columns = groupingChoices(d, v.Group, v.SystemQuery, v.DefaultSystem)
	}
	if n := liveSamples(run, v.RowCount); n > h.liveFiguresCap() {
		v.ResultsAtEnd = n
	} else if run.BatchesDone > 0 {
		if err := h.runResults(c, run, &v, false); err != nil {
			p := preparingOf(err)
			if p == nil {
				return err
			}
			// Everything else of the page shows now; the figures on a
			// reload once built.
			v.Preparing = preparingView(p)
		}
	}
	if rep := v.Report; rep != nil {
		// A sample-wise run's unit counts come with its figures (stored
		// with a finished run's summary): a run too large to show its
		// figures while it runs, or whose figures are being prepared,
		// says them once they show.
		v.SampledAnswers, v.GEvalSources = rep.SampledAnswers, rep.GEvalSources
		if run.Finished() && rep.SampledAnswers != nil {
			// The status card counts scores; beside them, once the run
			// has finished, the answers behind them (which the stream
			// does not update while it runs).
			v.Progress.SampledKnown = true
			for _, a := range rep.SampledAnswers {
				v.Progress.SampledAnswers += a.Answers
				v.Progress.SampledUnreadable += a.Unreadable
			}
		}
	}
	if err := h.relatedRuns(ctx, run, &v); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunPage(v))
}

// runResults fills the run page's results: the figures and one page of
// the samples table. A finished run's come from its stored summary and one
// page of its stored per-sample results (report.LoadSummary,
// report.LoadSamplePage), so the page reads a bounded number of rows
// whatever the run's size; a search streams the rows' text a chunk at a
// time (report.SearchSamples). A running run builds the whole report as
// before (as does full, for tests).
func (h *Handlers) runResults(c echo.Context, run models.Run, v *web.RunView, full bool) error {
	ctx := c.Request().Context()
	q := c.QueryParams()
	opt := report.Options{GroupColumn: v.Group, SystemColumn: v.SystemQuery}
	if opt.GroupColumn == v.DefaultGroup {
		// "" groups by the dataset's own column too: ask for the summary
		// the runner stores when the run finishes (report.StoreStats), not
		// another variant of the same figures.
		opt.GroupColumn = ""
	}
	// The run's browser reviews, read once: the stored summary's key (and
	// its build, when it is not stored) and the human-source box use them.
	// A finished run's are read only if its report is built (the stored
	// summary's key is proved current without them), and its box counts
	// them in SQL (ratings48). So do a running run's: its box is counted
	// in SQL too, and its shared figures are keyed by its ratings' key,
	// which the run's ratings proof gives without reading them
	// (liveRatingsKey): its reviews are read when that proof no longer
	// holds or its figures are computed again, not at each view
	// (liveratings49).
	var err error
	stored := !full && run.Finished()
	live := !full && !run.Finished()
	counted := stored || (live && !h.live.readEveryRating)
	if counted {
		opt.Reviews, err = report.ChosenReviewsOnDemand(ctx, h.DB, run)
	} else {
		opt.Reviews, err = report.ReadBrowserReviews(ctx, h.DB, run)
	}
	if err != nil {
		return err
	}
	if run.Finished() {
		// Its figures while it ran are read no more.
		h.live.forget(run.ID)
	}
	// A run under way reads the figures its viewers share (liveReport:
	// computed once per progress step and at most every few seconds, of
	// the dataset's rows only what the figures read) and the texts of the
	// samples shown by key (report.WithTexts). A search streams the
	// dataset's text a chunk at a time for the matching ids
	// (report.MatchingRows), as a finished run's does, and filters the
	// shared figures' samples by them: it built the whole report at each
	// view before. full builds it whole (tests compare the two).
	var rep *report.Report
	var lv *liveFiguresEntry
	switch {
	case stored:
		rep, err = h.runSummary(ctx, run.ID, opt)
	case live:
		var stale bool
		if lv, stale, err = h.liveFiguresFor(ctx, run, opt); err == nil {
			rep, v.Live = lv.rep, lv.note()
			if stale {
				// The last figures computed, while newer ones are: a
				// copy, the note is shared.
				n := *v.Live
				n.Refreshing = true
				v.Live = &n
			}
		}
	default:
		rep, err = h.buildReportWith(ctx, run.ID, opt)
	}
	if err != nil {
		return err
	}
	if v.Group == "" {
		// "No grouping" chosen over the dataset's own group column: on a
		// copy, the report may be cached.
		cp := *rep
		cp.Criteria = slices.Clone(rep.Criteria)
		for i := range cp.Criteria {
			cp.Criteria[i].GroupColumn, cp.Criteria[i].Grouped = "", nil
		}
		rep = &cp
	}
	v.Report = rep
	if counted {
		if v.Humans, err = h.countedHumanSourceView(ctx, run, rep, canRecomputeHumans(c)); err != nil {
			return err
		}
	} else {
		v.Humans = humanSourceView(run, rep, opt.Reviews, canRecomputeHumans(c))
	}
	if stored {
		v.Table, err = storedSampleTable(ctx, h.DB, rep, q)
		if err != nil {
			return err
		}
	} else {
		var match func(*report.SampleResult) bool
		if needle := strings.TrimSpace(q.Get("q")); live && needle != "" {
			ids, err := report.MatchingRows(ctx, h.DB, rep, needle)
			if err != nil {
				return err
			}
			found := make(map[int64]struct{}, len(ids))
			for _, id := range ids {
				found[id] = struct{}{}
			}
			match = func(s *report.SampleResult) bool { _, ok := found[s.RowID]; return ok }
		}
		v.Table = sampleTableOf(lv, rep, q, match)
		if live {
			// The page's rows are copies: the report keeps no text.
			if err := report.WithTexts(ctx, h.DB, rep, v.Table.Rows); err != nil {
				return err
			}
		}
	}
	v.Table.Group = q.Get("group")
	v.Table.ShowRounds = methods.For(run.Method).Words().Round != ""
	// A missing value says why (a short word, the reason in its title).
	if err := h.sayWhyTableMissing(ctx, run, &v.Table); err != nil {
		return err
	}
	return nil
}

// pickSystem resolves the run page's ?system= query to a report option:
// the query's column when the dataset has it, report.NoSystem to turn
// system-level correlation off, otherwise "" (the column found by name).
func pickSystem(q string, columns []string) string {
	if q == web.NoSystem || slices.Contains(columns, q) {
		return q
	}
	return ""
}

// groupingChoices are the columns the run page offers to group samples by
// and to find their systems in: the dataset's columns but its id column
// and its human rating columns, which group nothing (each id is a group of
// one sample; a rating column groups samples by the humans' own rating).
// QA: both were offered, and choosing one gave "undefined" everywhere. A
// column in keep (the one chosen, the default) stays offered whatever it is.
func groupingChoices(d models.Dataset, keep ...string) []string {
	var cols []string
	for _, col := range d.Columns {
		skip := col == d.IDColumn || slices.Contains(d.RatingColumns, col)
		if !skip || (col != "" && slices.Contains(keep, col)) {
			cols = append(cols, col)
		}
	}
	return cols
}

// pickGroup resolves the run page's ?group= query to the column to group
// by: the query's column when the dataset has it, none for web.NoGroup,
// otherwise the dataset's own group column.
func pickGroup(q string, columns []string, def string) string {
	if q == web.NoGroup {
		return ""
	}
	if slices.Contains(columns, q) {
		return q
	}
	return def
}

// relatedRuns fills the run page's links to other runs: the parent of a
// variant, the experiment, the runs derived from this one with their change
// in agreement, the repeatability over reseeds, and the runs it can be
// compared with.
func (h *Handlers) relatedRuns(ctx context.Context, run models.Run, v *web.RunView) error {
	if run.ParentRunID != nil {
		if p, err := h.DB.FindRun(ctx, workspaceOf(ctx), *run.ParentRunID); err == nil {
			v.Parent = &p
		}
	}
	if run.ExperimentID != nil {
		if e, err := h.DB.FindExperiment(ctx, workspaceOf(ctx), *run.ExperimentID); err == nil {
			v.Experiment = &e
		}
	}
	derived, err := h.DB.ListDerivedRuns(ctx, workspaceOf(ctx), run.ID)
	if err != nil {
		return err
	}
	own := math.NaN()
	if v.Report != nil {
		own = averagePearson(v.Report)
	}
	var reseeds []*report.Report
	for _, d := range derived {
		it := web.DerivedRunItem{Run: d, Delta: math.NaN()}
		if d.BatchesDone > 0 && liveSamples(d, v.RowCount) <= liveReportSamples {
			rep, err := h.runSummary(ctx, d.ID, report.Options{})
			if preparingOf(err) != nil {
				v.Derived = append(v.Derived, it) // its change shows once built
				continue
			}
			if err != nil {
				return err
			}
			it.Delta = averagePearson(rep) - own
			if d.Variant == runner.VariantReseed && d.Completed() {
				reseeds = append(reseeds, rep)
			}
		}
		v.Derived = append(v.Derived, it)
	}
	if len(reseeds) > 0 && v.Report != nil {
		v.Repeatability = repeatability(v.Report, reseeds)
	}
	cands, err := h.comparableRuns(ctx, run)
	if err != nil {
		return err
	}
	v.CompareWith = cands
	return nil
}

// repeatability is, per criterion, the spread of the Pearson correlation
// over a run and its reseeds.
func repeatability(own *report.Report, reseeds []*report.Report) []web.CriterionSpread {
	out := make([]web.CriterionSpread, 0, len(own.Criteria))
	for i, c := range own.Criteria {
		vals := []float64{c.Pearson.Coef}
		for _, r := range reseeds {
			if i < len(r.Criteria) {
				vals = append(vals, r.Criteria[i].Pearson.Coef)
			}
		}
		out = append(out, web.CriterionSpread{Name: c.Criterion.Name, Runs: len(vals), Spread: stats.SpreadOf(vals)})
	}
	return out
}

// comparableRuns lists the other runs of the project on the same data: the
// same dataset, or a noisy copy of it (or of its parent).
func (h *Handlers) comparableRuns(ctx context.Context, run models.Run) ([]models.Run, error) {
	// Archived datasets and runs still compare: archiving only tidies lists.
	runs, err := h.DB.ListSameSampleRuns(ctx, workspaceOf(ctx), run.ProjectID, run.DatasetID)
	if err != nil {
		return nil, err
	}
	var out []models.Run
	for _, r := range runs {
		// Only runs that judged one of this run's criteria are offered
		// (compare.go's comparableRun); any pair can still be compared by
		// address, with a warning.
		// A run without one answered call has no score to compare: not
		// offered either, finished or not (a run waiting for a judge that
		// is down was offered first, and compared as "undefined").
		if r.BatchesDone <= r.BatchesFailed {
			continue
		}
		if r.ID != run.ID && comparableRun(run, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// datasetRoot is the dataset a copy was made from, or the dataset itself.
func datasetRoot(d models.Dataset) int64 {
	if d.ParentDatasetID != nil {
		return *d.ParentDatasetID
	}
	return d.ID
}

// sampleTableQuery reads the samples table's settings from the query:
// criterion, sort and direction, search, filter.
func sampleTableQuery(rep *report.Report, q url.Values) web.RunSampleTable {
	t := web.RunSampleTable{RunID: rep.Run.ID, Rounds: rep.Run.Settings.Rounds, Q: strings.TrimSpace(q.Get("q")),
		OnlyMissing: q.Get("only") == "missing", Sort: q.Get("sort"), Dir: q.Get("dir")}
	for _, c := range rep.Criteria {
		t.Names = append(t.Names, c.Criterion.Name)
	}
	if k, err := strconv.Atoi(q.Get("criterion")); err == nil && k >= 0 && k < len(rep.Criteria) {
		t.Criterion = k
	}
	if t.Criterion < len(rep.Criteria) {
		if c := rep.Criteria[t.Criterion]; c.HasHuman && c.HumanScale.Mapped {
			t.HumanScaleNote = c.HumanScaleNote
		}
	}
	switch t.Sort {
	case "score", "human", "diff", "missing", "position":
	default:
		t.Sort = "position"
	}
	if t.Dir != "asc" && t.Dir != "desc" {
		t.Dir = "asc"
	}
	return t
}

// pageOf sets the table's page count and the page asked for.
func pageOf(t *web.RunSampleTable, q url.Values) {
	t.Pages = max(1, (t.Matching+samplesPerPage-1)/samplesPerPage)
	t.Page = 1
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p >= 1 {
		t.Page = min(p, t.Pages)
	}
}

// storedSampleTable is sampleTable of a finished run's summary, reading
// only the page shown from the stored per-sample results; a search reads
// the rows' text a chunk at a time and keeps the matching ids.
func storedSampleTable(ctx context.Context, db *models.DB, sum *report.Report, q url.Values) (web.RunSampleTable, error) {
	t := sampleTableQuery(sum, q)
	if len(sum.Criteria) == 0 {
		return t, nil
	}
	p := report.SamplePage{Criterion: t.Criterion, Sort: t.Sort, Dir: t.Dir, OnlyMissing: t.OnlyMissing}
	var err error
	if t.Q != "" {
		ids, err := report.SearchSamples(ctx, db, sum, p, t.Q)
		if err != nil {
			return t, err
		}
		t.Total, t.Matching = sum.Criteria[t.Criterion].SampleCount, len(ids)
		pageOf(&t, q)
		from := (t.Page - 1) * samplesPerPage
		t.Rows, err = report.LoadSampleRows(ctx, db, sum, t.Criterion, ids[min(from, len(ids)):min(from+samplesPerPage, len(ids))])
		return t, err
	}
	if _, t.Matching, err = report.LoadSamplePage(ctx, db, sum, p); err != nil {
		return t, err
	}
	t.Total = sum.Criteria[t.Criterion].SampleCount
	pageOf(&t, q)
	p.Page, p.PerPage = t.Page, samplesPerPage
	t.Rows, _, err = report.LoadSamplePage(ctx, db, sum, p)
	return t, err
}

// sampleTable selects, filters, sorts and pages one criterion's samples as
// the query asks, from a full report.
func sampleTable(rep *report.Report, q url.Values) web.RunSampleTable {
	return sampleTableOf(nil, rep, q, nil)
}

// sampleOrderKey names one order of a shared report's samples table.
type sampleOrderKey struct {
	criterion   int
	sort        string
	desc        bool
	onlyMissing bool
}

// sampleTableOf is sampleTable of a running run's shared figures (lv's,
// whose samples rep shares): each order, filtered, is kept with the
// computation (liveFiguresEntry.memo), so a view only pages it. A search
// filters and sorts at each view; match, when not nil, says which samples
// it finds (the shared figures keep no text: report.MatchingRows read it),
// else the samples' own text is searched. A nil lv is sampleTable.
func sampleTableOf(lv *liveFiguresEntry, rep *report.Report, q url.Values, match func(*report.SampleResult) bool) web.RunSampleTable {
	t := sampleTableQuery(rep, q)
	if len(rep.Criteria) == 0 {
		return t
	}
	all := rep.Criteria[t.Criterion].Samples
	t.Total = len(all)
	needle := strings.ToLower(t.Q)
	if lv != nil && needle == "" {
		k := sampleOrderKey{criterion: t.Criterion, sort: t.Sort, desc: t.Dir == "desc", onlyMissing: t.OnlyMissing}
		order := lv.memo(k, func() any {
			var keep func(*report.SampleResult) bool
			if k.onlyMissing {
				keep = func(s *report.SampleResult) bool { return s.Missing != 0 }
			}
			return report.SampleOrder(all, k.sort, k.desc, keep)
		}).([]int32)
		t.Matching = len(order)
		pageOf(&t, q)
		from := (t.Page - 1) * samplesPerPage
		// Copies: the page's rows get their texts (report.WithTexts).
		for _, i := range order[from:min(from+samplesPerPage, len(order))] {
			t.Rows = append(t.Rows, all[i])
		}
		return t
	}
	rows := make([]report.SampleResult, 0, len(all))
	for _, s := range all {
		if t.OnlyMissing && s.Missing == 0 {
			continue
		}
		if needle != "" {
			if match != nil && !match(&s) || match == nil && !report.SampleContains(s, needle) {
				continue
			}
		}
		rows = append(rows, s)
	}
	report.SortSamples(rows, t.Sort, t.Dir == "desc")
	t.Matching = len(rows)
	pageOf(&t, q)
	from := (t.Page - 1) * samplesPerPage
	t.Rows = rows[from:min(from+samplesPerPage, len(rows))]
	return t
}

func (h *Handlers) cancelRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Runner.Cancel(c.Request().Context(), h.workspaceID(c), id); err != nil {
		if models.ErrorCode(err) != models.EConflict {
			return err
		}
		setFlash(c, "error", models.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, runURL(id))
	}
	h.audit(c, models.AuditRunCancelled, "run "+strconv.FormatInt(id, 10), "")
	return redirect(c, runURL(id), "Run cancelled: no new calls are sent; answers already stored are kept. Cancelling is final: a cancelled run cannot be continued.")
}

// pauseRun pauses a queued or running run: no new calls start, the
// answers on their way are stored, and Continue goes on where it stopped.
func (h *Handlers) pauseRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.Runner.Pause(c.Request().Context(), h.workspaceID(c), id); err != nil {
		if models.ErrorCode(err) != models.EConflict {
			return err
		}
		setFlash(c, "error", models.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, runURL(id))
	}
	h.audit(c, models.AuditRunPaused, "run "+strconv.FormatInt(id, 10), "")
	return redirect(c, runURL(id), "Run paused: no new calls are sent; answers already on their way are stored when they arrive. Continue goes on where it stopped, without paying again for any batch.")
}

// continueRun queues a paused run again, where it stopped.
func (h *Handlers) continueRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	// A paused run continues with a new spending cap, if given.
	req := models.Requeue{SpendCapUSD: formSpendCap(c)}
	if _, err := h.Runner.Continue(c.Request().Context(), h.workspaceID(c), id, req); err != nil {
		if code := models.ErrorCode(err); code != models.EInvalid && code != models.EConflict {
			return err
		}
		setFlash(c, "error", models.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, runURL(id))
	}
	h.audit(c, models.AuditRunContinued, "run "+strconv.FormatInt(id, 10), "")
	return redirect(c, runURL(id), "Run continued: it goes on where it stopped; batches already answered are not sent again.")
}

// resumeRun re-opens a finished run with gaps: only the batches without an
// answer are sent again.
func (h *Handlers) resumeRun(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	// A run stopped by its spending cap resumes with a new cap, if given:
	// saved with the resume, so a refused resume leaves the cap as it was.
	req := models.Requeue{SpendCapUSD: formSpendCap(c)}
	if _, err := h.Runner.Resume(c.Request().Context(), h.workspaceID(c), id, req); err != nil {
		if code := models.ErrorCode(err); code != models.EInvalid && code != models.EConflict {
			return err
		}
		setFlash(c, "error", models.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, runURL(id))
	}
	h.audit(c, models.AuditRunResumed, "run "+strconv.FormatInt(id, 10), "")
	return redirect(c, runURL(id), "Run resumed: only the batches without an answer are sent.")
}

// formSpendCap is the new spending cap of a Resume or Continue form: nil
// when the field is blank (the run keeps its cap), NaN when it is not a
// number (nor one written with a decimal comma), which the resume or
// continue refuses with the cap's own message.
func formSpendCap(c echo.Context) *float64 {
	v := strings.TrimSpace(c.FormValue("spend_cap_usd"))
	if v == "" {
		return nil
	}
	// A decimal comma ("2,5") is read as the launch form reads it.
	x, problem := typedDecimal(v, "2.5")
	if problem != "" {
		x = math.NaN()
	}
	return &x
}

// datasetNames are the names of the datasets ids, read in one statement;
// one deleted (in the trash, or purged) is "(deleted dataset)".
func (h *Handlers) datasetNames(ctx context.Context, wsID int64, ids []int64) (map[int64]string, error) {
	names, err := h.DB.DatasetNames(ctx, wsID, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := names[id]; !ok {
			names[id] = "(deleted dataset)"
		}
	}
	return names, nil
}

// runListItems are the rows of a runs table: each run with its dataset's
// name (from names, those missing read in one statement), cost and, once
// finished, its agreement with the human ratings.
func (h *Handlers) runListItems(ctx context.Context, runs []models.Run, names map[int64]string) ([]web.RunListItem, error) {
	var missing []int64
	for _, r := range runs {
		if _, ok := names[r.DatasetID]; !ok && !slices.Contains(missing, r.DatasetID) {
			missing = append(missing, r.DatasetID)
		}
	}
	if len(missing) > 0 {
		read, err := h.datasetNames(ctx, workspaceOf(ctx), missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(names, read)
	}
	items := make([]web.RunListItem, 0, len(runs))
	for _, r := range runs {
		it := web.RunListItem{Run: r, DatasetName: names[r.DatasetID], Cost: runCostText(r), Agreement: math.NaN()}
		// Agreement of finished runs only: their reports are cached and
		// their figures final.
		it.NoScores = r.Finished() && r.BatchesDone == 0
		if r.Finished() && r.BatchesDone > 0 {
			rep, err := h.runSummary(ctx, r.ID, report.Options{})
			if preparingOf(err) != nil {
				// Being built in the background: the agreement shows
				// once it is stored.
				it.Preparing = true
				items = append(items, it)
				continue
			}
			if err != nil {
				return nil, err
			}
			it.Agreement = averagePearson(rep)
			_, it.NoScores = rep.NoScoresRead()
			for _, cr := range rep.Criteria {
				it.HasHuman = it.HasHuman || cr.HasHuman
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// runFailures reads why a run's calls failed: the scores without an answer
// per criterion and the causes, with links to their calls. A run without
// failed calls costs no query.
func (h *Handlers) runFailures(ctx context.Context, run models.Run) (map[int]int, []web.RunFailureCause, error) {
	if run.BatchesFailed == 0 {
		return map[int]int{}, nil, nil
	}
	noAnswer, err := h.DB.NoAnswerScores(ctx, run.ID)
	if err != nil {
		return nil, nil, err
	}
	causes, err := h.DB.FailureCauses(ctx, run.ID)
	if err != nil {
		return nil, nil, err
	}
	return noAnswer, failureViews(run.ID, causes), nil
}

func failureViews(runID int64, causes []models.FailureCause) []web.RunFailureCause {
	out := make([]web.RunFailureCause, 0, len(causes))
	for _, c := range causes {
		// The example is a call's stored error: shown as the call's is.
		c.Example = models.ShownJudgeText(c.Example)
		out = append(out, web.RunFailureCause{FailureCause: c, Label: web.FailureLabel(c.Kind), Href: web.RunFailedCallsURL(runID, c.Kind, c.Kind == "")})
	}
	return out
}

func sumCounts(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// batchesPerPage keeps the list of a run's calls light on large runs.
const batchesPerPage = 100

// listRunBatches lists a run's calls: ?status=failed keeps those that got
// no answer, ?cause= those of one cause (a judge error kind).
func (h *Handlers) listRunBatches(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	f := models.BatchFilter{Failed: c.QueryParam("status") == models.BatchFailed, Limit: batchesPerPage}
	if f.Failed {
		f.Kind = c.QueryParam("cause")
	}
	at := 1
	if p, err := strconv.Atoi(c.QueryParam("page")); err == nil && p > 1 {
		at = p
	}
	f.Offset = (at - 1) * batchesPerPage
	bs, total, err := h.DB.ListBatchSummaries(ctx, run.ID, f)
	if err != nil {
		return err
	}
	causes, err := h.DB.FailureCauses(ctx, run.ID)
	if err != nil {
		return err
	}
	v := web.RunBatchesView{Page: page(c, run.Name+": calls"), Run: run, Failed: f.Failed, Cause: f.Kind, Causes: failureViews(run.ID, causes),
		Total: total, At: at, Pages: max(1, (total+batchesPerPage-1)/batchesPerPage),
		ProjectCrumb: h.projectCrumb(ctx, h.workspaceID(c), run.ProjectID)}
	m := methods.For(run.Method)
	// A sample-wise method's unit is one sample: the list names it by its
	// id, as its page does ("Sample tc-000"), not by the unit's number,
	// which restarts with each criterion and matches no id in the data.
	ids, err := h.unitSampleIDs(ctx, run, bs)
	if err != nil {
		return err
	}
	for _, b := range bs {
		row := web.RunBatchRow{Batch: b, Criterion: unitCriterion(run, m, b.CriterionIndex)}
		if len(b.RowIDs) == 1 {
			row.SampleID = ids[b.RowIDs[0]]
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, http.StatusOK, web.RunBatchesPage(v))
}

// unitSampleIDs maps the row of each of bs judged alone to its sample's
// id, for a method that judges samples one by one (its unit is named by
// its sample); empty for a batched method, whose units have numbers.
func (h *Handlers) unitSampleIDs(ctx context.Context, run models.Run, bs []models.RunBatch) (map[int64]string, error) {
	ids := map[int64]string{}
	if methods.For(run.Method).Batched() {
		return ids, nil
	}
	var rowIDs []int64
	for _, b := range bs {
		if len(b.RowIDs) == 1 {
			rowIDs = append(rowIDs, b.RowIDs[0])
		}
	}
	if len(rowIDs) == 0 {
		return ids, nil
	}
	rows, err := h.DB.FindDatasetRows(ctx, run.DatasetID, rowIDs)
	if err != nil {
		return nil, err
	}
	for id, r := range rows {
		ids[id] = r.ExternalID
	}
	return ids, nil
}
