package handlers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

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

// compareRowsShown caps the comparison table of the API and of shared
// comparisons: the largest differences are the ones worth reading.
const compareRowsShown = 200

// comparePageSize is how many samples one page of the compare page lists
// (largest disagreement first; the pager reaches every sample).
const comparePageSize = 50

// comparison is two runs on the same samples, one criterion: A's
// criterion number criterion, and B's criterion of the same name
// (criterionB), or B's criterion of the same number when B has none of
// that name (then Mismatch says why the two cannot be compared).
type comparison struct {
	a, b         models.Run
	dsA, dsB     models.Dataset
	criterion    int
	criterionB   int
	critA, critB evaluator.Criterion
	// Mismatch is empty when both runs judged the same criterion on the
	// same scale; otherwise it explains the difference.
	Mismatch string
}

// loadComparison reads ?a=, ?b= and ?criterion= and checks that the runs
// judged the same samples: the same dataset, or a noisy copy of it.
func (h *Handlers) loadComparison(c echo.Context) (comparison, error) {
	ids := [2]int64{}
	for i, key := range []string{"a", "b"} {
		q := c.QueryParam(key)
		id, err := strconv.ParseInt(q, 10, 64)
		switch {
		case q == "":
			return comparison{}, models.Errorf(models.EInvalid, "Choose two runs to compare: the address names no run %s (%s= is missing).", strings.ToUpper(key), key)
		case err != nil || id <= 0:
			return comparison{}, models.Errorf(models.EInvalid, "Choose two runs to compare: %s=%s in the address is not a run number.", key, q)
		}
		ids[i] = id
	}
	return h.comparisonOf(c, ids)
}

// refuseComparison answers a compare address that names no pair of runs
// that can be compared (a run missing, unreadable or unknown, runs on
// different samples, a run with itself, a criterion neither has) with a
// page that says why in a sentence and offers the way on: the runs that
// can be compared with the run the address names (the run page's "Compare
// with…" list), that run's page and its project's runs. Errors of any
// other kind go to the error handler.
func (h *Handlers) refuseComparison(c echo.Context, err error) error {
	status := http.StatusUnprocessableEntity
	switch models.ErrorCode(err) {
	case models.EInvalid:
	case models.ENotFound:
		status = http.StatusNotFound
	default:
		return err
	}
	ctx := c.Request().Context()
	title := "These runs cannot be compared"
	var anchor *models.Run
	for _, key := range []string{"a", "b"} {
		id, perr := strconv.ParseInt(c.QueryParam(key), 10, 64)
		if perr != nil || id <= 0 {
			title = "Choose two runs to compare"
			continue
		}
		run, ferr := h.DB.FindRun(ctx, h.workspaceID(c), id)
		if ferr != nil {
			title = "Choose two runs to compare"
			continue
		}
		if anchor == nil {
			anchor = &run
		}
	}
	reason := models.ErrorMessage(err)
	if status == http.StatusNotFound {
		// The store's "run 9 does not exist (…)", as a sentence.
		reason = upperFirst(reason) + ". Choose one of the runs below, or open a project's runs."
	}
	var crit *criterionRefusal
	if errors.As(err, &crit) {
		// Both runs exist and judged the same samples: only the criterion
		// is wrong.
		v := web.CompareRefusedView{Reason: reason, CriterionOnly: true, Criteria: sharedCriteria(crit.a, crit.b, *c.Request().URL),
			CriteriaA: criterionNames(crit.a), CriteriaB: criterionNames(crit.b)}
		title = "Choose a criterion both runs judged"
		if len(v.Criteria) == 0 {
			title = "These runs judged no criterion of the same name"
		}
		v.Page = page(c, title)
		project, err := h.DB.FindProject(ctx, h.workspaceID(c), crit.a.ProjectID)
		if err != nil {
			return err
		}
		if v.Choices, err = h.comparableRuns(ctx, crit.a); err != nil {
			return err
		}
		v.Run, v.Project = &crit.a, &project
		return render(c, status, web.CompareRefusedPage(v))
	}
	v := web.CompareRefusedView{Page: page(c, title), Reason: reason}
	if anchor != nil {
		project, err := h.DB.FindProject(ctx, h.workspaceID(c), anchor.ProjectID)
		if err != nil {
			return err
		}
		choices, err := h.comparableRuns(ctx, *anchor)
		if err != nil {
			return err
		}
		v.Run, v.Project, v.Choices = anchor, &project, choices
	}
	return render(c, status, web.CompareRefusedPage(v))
}

// comparisonOf loads runs ids[0] and ids[1] of the request's workspace on
// the criterion named by ?criterion= (a share link fixes the runs).
func (h *Handlers) comparisonOf(c echo.Context, ids [2]int64) (comparison, error) {
	ctx := c.Request().Context()
	var cmp comparison
	var err error
	if ids[0] == ids[1] {
		// Every figure of a run against itself is a perfect match (a
		// difference of 0, p = 1, an undefined z): nothing to read.
		return cmp, models.Errorf(models.EInvalid, "Run %d cannot be compared with itself: its scores would match their own exactly, which tells nothing. Choose another run that judged the same samples.", ids[0])
	}
	if cmp.a, err = h.DB.FindRun(ctx, h.workspaceID(c), ids[0]); err != nil {
		return cmp, err
	}
	if cmp.b, err = h.DB.FindRun(ctx, h.workspaceID(c), ids[1]); err != nil {
		return cmp, err
	}
	if cmp.dsA, err = h.DB.FindDataset(ctx, h.workspaceID(c), cmp.a.DatasetID); err != nil {
		return cmp, err
	}
	if cmp.dsB, err = h.DB.FindDataset(ctx, h.workspaceID(c), cmp.b.DatasetID); err != nil {
		return cmp, err
	}
	if datasetRoot(cmp.dsA) != datasetRoot(cmp.dsB) {
		return cmp, models.Errorf(models.EInvalid, "Runs %d and %d judged different datasets (%s and %s), so their scores cannot be compared sample by sample. Compare run %d with a run on the same samples.",
			cmp.a.ID, cmp.b.ID, cmp.dsA.Name, cmp.dsB.Name, cmp.a.ID)
	}
	if q := c.QueryParam("criterion"); q != "" {
		k, err := criterionOfQuery(q, cmp.a)
		if err != nil {
			return cmp, &criterionRefusal{err: err, a: cmp.a, b: cmp.b}
		}
		cmp.criterion = k
	}
	na, nb := len(cmp.a.RubricSnapshot.Criteria), len(cmp.b.RubricSnapshot.Criteria)
	if cmp.criterion >= na {
		return cmp, &criterionRefusal{a: cmp.a, b: cmp.b, err: models.Errorf(models.EInvalid,
			"Criterion number %d does not exist in both runs: they have %d and %d criteria, numbered from 0 (a criterion's name works too).", cmp.criterion, na, nb)}
	}
	cmp.critA = cmp.a.RubricSnapshot.Criteria[cmp.criterion]
	cmp.criterionB = matchingCriterion(cmp.critA, cmp.b.RubricSnapshot.Criteria)
	if cmp.criterionB < 0 {
		if cmp.criterion >= nb {
			return cmp, &criterionRefusal{a: cmp.a, b: cmp.b, err: models.Errorf(models.EInvalid,
				"Criterion number %d does not exist in both runs: they have %d and %d criteria, numbered from 0 (a criterion's name works too).", cmp.criterion, na, nb)}
		}
		cmp.criterionB = cmp.criterion
	}
	cmp.critB = cmp.b.RubricSnapshot.Criteria[cmp.criterionB]
	cmp.Mismatch = criterionMismatch(cmp.critA, cmp.critB)
	return cmp, nil
}

// criterionRefusal is a compare address naming two runs that can be
// compared, but a criterion (?criterion=) they do not both have: its page
// offers the criteria they share instead of saying the runs cannot be
// compared. It reads as the error it wraps everywhere else (the API).
type criterionRefusal struct {
	err  error
	a, b models.Run
}

func (e *criterionRefusal) Error() string { return e.err.Error() }
func (e *criterionRefusal) Unwrap() error { return e.err }

// sharedCriteria links the criteria of run A that run B judged too (by
// name, as a comparison pairs them), each to the address u with its
// criterion set to A's number and its page dropped.
func sharedCriteria(a, b models.Run, u url.URL) []web.CompareCriterionLink {
	var out []web.CompareCriterionLink
	for i, cr := range a.RubricSnapshot.Criteria {
		if matchingCriterion(cr, b.RubricSnapshot.Criteria) < 0 {
			continue
		}
		q := u.Query()
		q.Del("page")
		q.Set("criterion", strconv.Itoa(i))
		out = append(out, web.CompareCriterionLink{Name: cr.Name, Href: templ.SafeURL(u.Path + "?" + q.Encode())})
	}
	return out
}

// criterionOfQuery reads ?criterion= against run A's criteria: a number
// (from 0, as the page's own links and selector write it), else a name as
// a person types it into the address, exact first, then in any case and
// spacing (sameCriterionName).
func criterionOfQuery(q string, a models.Run) (int, error) {
	if k, err := strconv.Atoi(q); err == nil {
		if k < 0 {
			return 0, models.Errorf(models.EInvalid, "Criterion %d is not a criterion number: numbers start at 0.", k)
		}
		return k, nil
	}
	crits := a.RubricSnapshot.Criteria
	for i, cr := range crits {
		if cr.Name == q {
			return i, nil
		}
	}
	names := make([]string, len(crits))
	for i, cr := range crits {
		if sameCriterionName(cr.Name, q) {
			return i, nil
		}
		names[i] = cr.Name
	}
	if len(names) == 0 {
		return 0, models.Errorf(models.EInvalid, "Criterion %s cannot be chosen: run %d has no criteria.", web.Quoted(q), a.ID)
	}
	return 0, models.Errorf(models.EInvalid, "Criterion %s is neither a criterion number nor the name of one of run %d's criteria (%s).", web.Quoted(q), a.ID, joinQuoted(names))
}

// criterionNames are a run's criteria's names, in order.
func criterionNames(r models.Run) []string {
	out := make([]string, len(r.RubricSnapshot.Criteria))
	for i, cr := range r.RubricSnapshot.Criteria {
		out[i] = cr.Name
	}
	return out
}

// sameCriterionName compares criterion names as people write them
// ("Fluency" and "fluency " are one criterion).
func sameCriterionName(x, y string) bool {
	return strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(y))
}

// matchingCriterion is the index of the criterion of cs named like c, or
// -1.
func matchingCriterion(c evaluator.Criterion, cs []evaluator.Criterion) int {
	for i, x := range cs {
		if sameCriterionName(c.Name, x.Name) {
			return i
		}
	}
	return -1
}

// criterionMismatch explains why scores of criteria a and b do not measure
// the same thing, or is empty when they do (same name, same scale).
func criterionMismatch(a, b evaluator.Criterion) string {
	switch {
	case !sameCriterionName(a.Name, b.Name):
		return fmt.Sprintf("Run A judged %s (%s) and run B judged %s (%s): different criteria. How closely their scores agree says nothing about which judge is better, so no verdict is given; choose runs that judged the same criterion.",
			a.Name, scaleText(a), b.Name, scaleText(b))
	case a.Lo != b.Lo || a.Hi != b.Hi:
		return fmt.Sprintf("Both runs judged %s, but on different scales (%s and %s). Scores are rescaled to 0 to 1 for the sample table, but a scale with fewer steps cannot agree as closely, so no verdict is given on how closely the two runs' scores agree with each other. Each run's agreement with the humans is a correlation, which does not depend on the scale, so those are compared.",
			a.Name, scaleText(a), scaleText(b))
	}
	return ""
}

// differentCriteria reports whether the runs judged differently named
// criteria. Their agreement with the humans is then measured against
// different ratings, so it is not compared as a pair (the paired tests
// would correlate B's scores with A's criterion's ratings). Runs that
// differ only in scale are compared: a correlation does not depend on the
// scale, as the experiment page's verdict compares methods on 1-5 and 0-5.
func (cmp comparison) differentCriteria() bool {
	return !sameCriterionName(cmp.critA.Name, cmp.critB.Name)
}

// scaleText writes a criterion's scale as pages show it, e.g. "1 to 5",
// "−2 to 2".
func scaleText(c evaluator.Criterion) string { return scaleEnd(c.Lo) + " to " + scaleEnd(c.Hi) }

// scaleEnd writes a scale end or a rating as pages show it: as short as
// it is exact, with a true minus sign (web.Minus).
func scaleEnd(v float64) string { return web.Minus(strconv.FormatFloat(v, 'g', -1, 64)) }

// comparableRun reports whether other judged a criterion of run's with the
// same name: only such runs are offered for comparison by default. The
// scale may differ (LLM-Eval's 0-5 against BatchEval's 1-5): their
// agreement with the humans is still compared, as on the experiment page.
func comparableRun(run, other models.Run) bool {
	for _, c := range run.RubricSnapshot.Criteria {
		if matchingCriterion(c, other.RubricSnapshot.Criteria) >= 0 {
			return true
		}
	}
	return false
}

// alignedCriterion is rep with criterion j moved to index i, so code that
// pairs two reports' criteria by index pairs criteria of the same name.
func alignedCriterion(rep *report.Report, i, j int) *report.Report {
	if i == j || j >= len(rep.Criteria) {
		return rep
	}
	cp := *rep
	cp.Criteria = make([]report.CriterionReport, max(i+1, len(rep.Criteria)))
	copy(cp.Criteria, rep.Criteria)
	cp.Criteria[i] = rep.Criteria[j]
	// The ratings read on criterion j travel with it (report.CriterionShort).
	if j < len(rep.Humans.Criteria) {
		cp.Humans.Criteria = make([]report.CriterionHumans, max(i+1, len(rep.Humans.Criteria)))
		copy(cp.Humans.Criteria, rep.Humans.Criteria)
		cp.Humans.Criteria[i] = rep.Humans.Criteria[j]
	}
	return &cp
}

// unit maps a score onto [0, 1] by its criterion's range.
func unit(v *float64, c evaluator.Criterion) *float64 {
	if v == nil {
		return nil
	}
	u := stats.Rescale(*v, c.Lo, c.Hi, 0, 1)
	if math.IsNaN(u) {
		return nil
	}
	// Without the noise of the division: 2.2 on 1 to 3 is 0.6, not
	// 0.6000000000000001 (report.MeanNumber), so the API's unit_a and
	// unit_b read as the decimals the difference is worked out from.
	if x, err := strconv.ParseFloat(report.MeanNumber(u), 64); err == nil {
		u = x
	}
	return &u
}

// unitDifference is A − B on the 0 to 1 scale, worked out in decimals
// from the two unit scores as the API writes them (report.MeanNumber),
// so that a reader subtracting the API's unit_a and unit_b gets its
// unit_difference to the last digit, and the page's rounded difference is
// that decimal rounded: 0.6 − 0.4 is 0.2, where the floats gave
// 0.19999999999999996 or 0.20000000000000007. text is the exact decimal,
// d the float nearest it; both empty when either score is missing.
func unitDifference(ua, ub *float64) (d *float64, text string) {
	if ua == nil || ub == nil {
		return nil, ""
	}
	ra, okA := new(big.Rat).SetString(report.MeanNumber(*ua))
	rb, okB := new(big.Rat).SetString(report.MeanNumber(*ub))
	if !okA || !okB {
		// Not a number (the callers pass none): the float difference.
		x := *ua - *ub
		return &x, ""
	}
	diff := ra.Sub(ra, rb)
	x, _ := diff.Float64()
	return &x, exactDecimal(diff)
}

// exactDecimal writes r, a rational whose denominator divides a power of
// ten (a difference of two decimals), as its exact decimal, with no
// trailing zeros: 0.2, -0.1065500658600664, 0.
func exactDecimal(r *big.Rat) string {
	places := 0
	ten, pow := big.NewInt(10), big.NewInt(1)
	rem := new(big.Int)
	// At most 400 places: a decimal of float64 has fewer (the smallest
	// subnormal has 1074 binary places, but MeanNumber writes such a
	// value in exponent form with 17 significant digits, whose difference
	// still ends within 400 places for the unit scale's 0 to 1).
	for places < 400 && rem.Rem(pow, r.Denom()).Sign() != 0 {
		pow.Mul(pow, ten)
		places++
	}
	s := r.FloatString(places)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// compareRuns shows the samples on which two runs disagree most, after
// putting both on a 0-1 scale, and how well their scores correlate.
func (h *Handlers) compareRuns(c echo.Context) error {
	cmp, err := h.loadComparison(c)
	if err != nil {
		return h.refuseComparison(c, err)
	}
	pageNum, _ := strconv.Atoi(c.QueryParam("page"))
	v, err := h.compareView(c.Request().Context(), cmp, max(pageNum-1, 0)*comparePageSize, comparePageSize, true)
	if p := preparingOf(err); p != nil {
		v, err = compareShell(cmp), nil
		v.Preparing = preparingView(p)
	}
	if err != nil {
		return err
	}
	if err := h.sayWhyCompareRowsMissing(c.Request().Context(), cmp, &v, readerMember); err != nil {
		return err
	}
	v.Page = page(c, "Compare runs")
	v.ProjectCrumb = h.projectCrumb(c.Request().Context(), h.workspaceID(c), cmp.a.ProjectID)
	return render(c, http.StatusOK, web.ComparePage(v))
}

// compareView pairs the two runs' samples, largest disagreement first (the
// limit rows from offset on; Total counts them all), with the correlation
// of their scores. The compare page and the API both use it. A finished
// run's figures are its stored summary and its samples' scores are read
// from its stored per-sample results (compareReport); the pairing of two
// finished runs is kept in the cache (matchedOf), and only the rows shown
// have their text read. While a large finished run's summary is being
// prepared the error is its *preparingError. The paired tests of the two
// runs' agreement with the humans are computed only with agreement (the
// compare page and the API show them, the share link does not).
func (h *Handlers) compareView(ctx context.Context, cmp comparison, offset, limit int, agreement bool) (web.CompareView, error) {
	m, err := h.matchedOf(ctx, cmp)
	if err != nil {
		return web.CompareView{}, err
	}
	v := compareShell(cmp)
	v.HumanA, v.HumanB, v.Unmatched = m.humanA, m.humanB, m.unmatched
	v.MissingA, v.MissingB = m.missingA, m.missingB
	v.HumansNote = m.humansNote
	v.Total = len(m.rows)
	v.Offset, v.PageSize = min(max(offset, 0), v.Total), limit
	fields := map[int64][]evaluator.Text{}
	shown := m.rows[v.Offset:min(len(m.rows), v.Offset+limit)]
	roundsA, roundsB, err := h.shownRounds(ctx, cmp, shown)
	if err != nil {
		return web.CompareView{}, err
	}
	for _, r := range shown {
		if rounds, ok := roundsA[r.rowID]; ok {
			r.a = report.FinalNumber(r.a, rounds)
		}
		if rounds, ok := roundsB[r.rowIDB]; ok {
			r.b = report.FinalNumber(r.b, rounds)
		}
		row := web.CompareRow{RowID: r.rowID, ExternalID: r.externalID, Human: r.human, A: r.a, B: r.b,
			UnitA: unit(r.a, cmp.critA), UnitB: unit(r.b, cmp.critB)}
		// A run still going says of each sample without a score whether
		// it is not judged yet or its answered rounds gave none, as its
		// page's table does (the others: sayWhyCompareRowsMissing).
		if r.a == nil && r.missA >= 0 {
			row.AMissing = tableFinalMissing(cmp.a, r.missA)
		}
		if r.b == nil && r.missB >= 0 {
			row.BMissing = tableFinalMissing(cmp.b, r.missB)
		}
		row.Diff, row.DiffDecimal = unitDifference(row.UnitA, row.UnitB)
		if r.fields != nil {
			fields[r.rowID] = r.fields
		}
		v.Rows = append(v.Rows, row)
	}
	if err := h.compareRowText(ctx, cmp, v.Rows, fields); err != nil {
		return web.CompareView{}, err
	}
	v.Pearson, v.Spearman = m.pearson, m.spearman
	v.Reading = stats.Interpret(stats.MethodPearson, v.Pearson)
	if cmp.Mismatch != "" {
		// A reading such as "moderate agreement" between scores of two
		// different criteria or scales would be read as a verdict.
		v.Reading = mismatchReading(cmp)
	}
	if v.HumanA != nil && v.HumanB != nil {
		v.HasHuman = true
	}
	if v.HasHuman && agreement && !v.DifferentCriteria {
		v.Agreement, err = h.compareCriterion(ctx, cmp.a, cmp.b, max(v.HumanA.SampleCount, v.HumanB.SampleCount), cmp.criterion, v.SameDataset,
			func(ctx context.Context) (*report.Report, *report.Report, error) {
				if m.repA != nil {
					return m.repA, m.repB, nil
				}
				return h.compareReports(ctx, cmp)
			})
		switch {
		case errors.Is(err, errPairPending):
			v.AgreementPending = &web.ResultsPreparing{Samples: v.Total, RefreshSeconds: preparingRetrySeconds, LastFailed: errors.Is(err, errPairRetried)}
		case err != nil:
			return web.CompareView{}, err
		default:
			v.AgreementReading = agreementReading(v.Agreement, cmp.a.Name, cmp.b.Name)
			v.PairedNote = pairedSamplesNote(v.Agreement, v.HumanA, v.HumanB)
		}
	}
	if why := unscoredRunReading(cmp, m); why != "" {
		// Not "a run or the humans gave every sample the same score": a
		// run without a score has nothing to correlate.
		if v.HasHuman && !v.DifferentCriteria {
			v.AgreementReading = why
		}
		if cmp.Mismatch == "" {
			v.Reading = why
		}
	}
	if v.HasHuman && v.DifferentCriteria {
		v.AgreementReading = differentCriteriaReading
	}
	return v, nil
}

// pairedSamplesNote says over which samples the paired figures are, when
// they are not the samples of each run's own figure on its card: the
// paired tests need a sample scored by both runs and rated by the
// humans, so a run that left samples without a score (or scored some the
// other did not) shows, say, Pearson r 0.032 over 38 samples on its card
// and -0.039 over 33 in the table, which read as two answers to one
// question. "" when every count is the same.
func pairedSamplesNote(ds []stats.Difference, humanA, humanB *report.CriterionReport) string {
	n, nA, nB, ok := pairedSampleCounts(ds, humanA, humanB)
	if !ok || (n == nA && n == nB) {
		return ""
	}
	return fmt.Sprintf("The paired figures are over the %d samples that both runs scored and the humans rated; "+
		"each run's own agreement on its card above is over its own %d (A) and %d (B), so its figure there can differ from the one here.",
		n, nA, nB)
}

// pairedSampleCounts are the samples the paired figures are over (n: those
// both runs scored and the humans rated) and those of each run's own
// agreement with the humans (nA, nB: its Pearson r's); ok is false when
// either is unknown (no human ratings, the paired figures not computed).
func pairedSampleCounts(ds []stats.Difference, humanA, humanB *report.CriterionReport) (n, nA, nB int, ok bool) {
	if humanA == nil || humanB == nil {
		return 0, 0, 0, false
	}
	n = -1
	for _, d := range ds {
		if d.Method == stats.MethodPearson {
			n = d.N
		}
	}
	if n < 0 {
		return 0, 0, 0, false
	}
	return n, humanA.Pearson.N, humanB.Pearson.N, true
}

// unscoredRunReading says which of the compared runs has no score on the
// criterion, naming it, and whether one may still come (a run still going)
// or not (a finished run whose calls failed or whose answers could not be
// read); "" when both runs have scores.
func unscoredRunReading(cmp comparison, m *matchedSamples) string {
	scoredA, scoredB := false, false
	for _, r := range m.rows {
		scoredA = scoredA || r.a != nil
		scoredB = scoredB || r.b != nil
	}
	none := func(which string, run models.Run, crit evaluator.Criterion) string {
		if !run.Finished() {
			return fmt.Sprintf("Run %s, %s, has no scores yet: it is still %s. Its figures are compared once it has scored samples.",
				which, web.Quoted(run.Name), models.RunStatusLabel(run.Status))
		}
		if run.BatchesDone > run.BatchesFailed {
			// It has answers, on other criteria or unreadable ones: "no
			// scores at all" would be untrue of a run cancelled after
			// scoring another criterion (explore31).
			return fmt.Sprintf("Run %s, %s, has no score on %s: it ended (%s) before a sample was scored on it, as its page explains, so there is nothing of it to compare on this criterion.",
				which, web.Quoted(run.Name), crit.Name, models.RunStatusLabel(run.Status))
		}
		return fmt.Sprintf("Run %s, %s, has no scores at all: it ended (%s) before scoring a sample, as its page explains, so there is nothing of it to compare.",
			which, web.Quoted(run.Name), models.RunStatusLabel(run.Status))
	}
	switch {
	case !scoredA && !scoredB:
		return none("A", cmp.a, cmp.critA) + " " + none("B", cmp.b, cmp.critB)
	case !scoredA:
		return none("A", cmp.a, cmp.critA)
	case !scoredB:
		return none("B", cmp.b, cmp.critB)
	}
	return ""
}

// mismatchReading is the reading of how closely two runs' scores agree
// when they judged different criteria or scales: no verdict, and why.
func mismatchReading(cmp comparison) string {
	if cmp.differentCriteria() {
		return "not comparable. " + cmp.Mismatch
	}
	return fmt.Sprintf("no verdict: the runs used different scales (%s and %s), and a scale with fewer steps cannot agree as closely.", scaleText(cmp.critA), scaleText(cmp.critB))
}

// differentCriteriaReading is the agreement section's text for runs that
// judged different criteria: each run's agreement is shown on its card
// against its own criterion's ratings, and nothing is compared.
const differentCriteriaReading = "No verdict: the runs judged different criteria, so each run's agreement is measured against different human ratings. It is shown on each run's card above, and not compared."

// matchedSamples is two runs' samples paired on one criterion, as the
// compare page lists them, with the figures of the pairing.
type matchedSamples struct {
	// rows are the matched samples, largest disagreement first.
	rows      []matchedRow
	unmatched int
	// pearson and spearman correlate the two runs' final scores.
	pearson, spearman stats.Correlation
	// humanA and humanB are each run's agreement with the humans (nil
	// without ratings), without samples.
	humanA, humanB *report.CriterionReport
	// missingA and missingB are each run's missing scores on the
	// criterion.
	missingA, missingB web.CompareMissing
	// repA and repB are the reports paired (B's criterion aligned), kept
	// only for the request that paired them: the paired tests read them.
	repA, repB *report.Report
	// humansNote says that the two reports read different human ratings
	// (report.SameHumans), so the paired figures, which measure both runs
	// against A's, are not B's own; "" when they read the same.
	humansNote string
}

// matchedRow is one matched sample: A's row and id (the id is empty when
// the text is to be read), the human rating and both final scores, the
// row's text when the report had it.
type matchedRow struct {
	rowID       int64
	externalID  string
	human, a, b *float64
	// rowIDB is the sample's row in run B's dataset (rowID on the same
	// dataset, its copy's row on a noisy copy).
	rowIDB int64
	fields []evaluator.Text
	// missA and missB are the sample's judged rounds without a score in
	// each run while it is going (the report built whole counts them), -1
	// once it has ended (a stored report does not count them, and the
	// reason no longer depends on them: tableFinalMissing).
	missA, missB int
}

// matchedCacheSize bounds the pairings kept: each holds every matched
// sample (about 7 MB at 100,000).
const matchedCacheSize = 8

// matchLiveSamples bounds the samples of a pair of finished runs paired
// inside a request: a larger pair not yet in the cache is paired in the
// background and the view says it is being prepared. Reading both runs'
// stored scores and pairing them took 0.4-0.7 s at 100,000 samples on
// SQLite and 0.5-1.4 s on PostgreSQL (BenchmarkLargeRunAnswers, loaded
// machine), against 200 ms for a page; 20,000 is about a fifth of that.
const matchLiveSamples = 20_000

// matchWait is how long a view of such a pair waits for its background
// pairing before it shows "Preparing" (and reloads): a pair only a little
// over matchLiveSamples is shown at once. With 150 ms the first views of
// 100,000-sample pairs took 165-227 ms on a loaded machine, past a page's
// 200 ms.
const matchWait = 100 * time.Millisecond

// matchRetrySeconds is how soon a view of a pair being paired reloads
// (and the API's Retry-After): a pairing takes about a second.
const matchRetrySeconds = 2

// matchedOf pairs the two runs' samples on the comparison's criterion:
// from the cache when both runs have finished, otherwise from their
// reports (compareReports), cached when both have. A pair of finished
// runs over matchLive samples not yet in the cache is paired in the
// background: unless it ends within matchWait, the error is a
// *preparingError saying so.
func (h *Handlers) matchedOf(ctx context.Context, cmp comparison) (*matchedSamples, error) {
	rc := h.reports
	same := cmp.dsA.ID == cmp.dsB.ID
	cacheable := rc != nil && cmp.a.Finished() && cmp.b.Finished() && cmp.a.FinishedAt != nil && cmp.b.FinishedAt != nil
	var key criterionPairKey
	cached := func() (*matchedSamples, bool) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		m, ok := rc.matched[key]
		return m, ok
	}
	if cacheable {
		key = criterionPairKey{finishedPairKey(cmp.a, cmp.b, same), cmp.criterion}
		if m, ok := cached(); ok {
			return m, nil
		}
	}
	compute := func(ctx context.Context) (*matchedSamples, error) {
		repA, repB, err := h.compareReports(ctx, cmp)
		if err != nil {
			return nil, err
		}
		m := matchSamples(repA, repB, cmp, same)
		if cacheable {
			kept := *m
			kept.repA, kept.repB = nil, nil
			rc.mu.Lock()
			if len(rc.matched) >= matchedCacheSize {
				clear(rc.matched)
			}
			rc.matched[key] = &kept
			rc.mu.Unlock()
		}
		return m, nil
	}
	samples := max(cmp.dsA.RowCount, cmp.dsB.RowCount)
	if !cacheable || samples <= h.matchLive() {
		return compute(ctx)
	}
	// Both summaries first, in the request: while one is being prepared
	// the view says so as before (and the background would only fail).
	for _, r := range []models.Run{cmp.a, cmp.b} {
		if _, err := h.runSummary(ctx, r.ID, report.Options{}); err != nil {
			return nil, err
		}
	}
	failed := h.pairInBackground(ctx, fmt.Sprintf("matched\x00%+v", key), func(ctx context.Context) error {
		_, err := compute(ctx)
		return err
	})
	for deadline := time.Now().Add(matchWait); ; {
		if m, ok := cached(); ok {
			return m, nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil, &preparingError{runID: cmp.a.ID, otherRunID: cmp.b.ID, samples: samples, lastFailed: failed, retry: matchRetrySeconds}
}

// matchLive is matchLiveSamples, or the test's bound.
func (h *Handlers) matchLive() int {
	if h.matchLiveSamples > 0 {
		return h.matchLiveSamples
	}
	return matchLiveSamples
}

// sameRating reports whether two human ratings are the same: both
// missing, or equal up to floating-point noise.
func sameRating(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) <= 1e-9*math.Max(1, math.Max(math.Abs(*a), math.Abs(*b)))
}

// compareHumansNote says that run B's report holds other human ratings than run
// A's for some of the matched samples (differ of matched), while the
// paired figures measure both runs against A's: B's paired figure is then
// not its own. "" when every matched sample has the same rating in both.
func compareHumansNote(repA, repB *report.Report, cmp comparison, differ, matched int) string {
	if differ == 0 {
		return ""
	}
	var why string
	switch {
	case !report.SameCriterionHumans(repA, cmp.criterion, repB, cmp.criterion):
		why = fmt.Sprintf("The two runs' reports read different human ratings: A reads %s, B reads %s", repA.CriterionShort(cmp.criterion), repB.CriterionShort(cmp.criterion))
	case cmp.critA.HumanColumn != cmp.critB.HumanColumn:
		why = fmt.Sprintf("The two runs read their human ratings from different columns: A from %s, B from %s", web.Quoted(cmp.critA.HumanColumn), web.Quoted(cmp.critB.HumanColumn))
	default:
		why = "The two runs' reports hold different human ratings"
	}
	return fmt.Sprintf("%s, which differ on %s of the %s samples compared. "+
		"The paired figures here measure both runs against run A's ratings, so B's differ from its own on its card above. "+
		"To compare the runs' own figures, recompute one of them with the same human ratings (on its page, under Human ratings).",
		why, runCount(differ), runCount(matched))
}

// compareReports are the two runs' reports as the compare page reads them
// (compareReport), B's criterion aligned with A's.
func (h *Handlers) compareReports(ctx context.Context, cmp comparison) (repA, repB *report.Report, err error) {
	same := cmp.dsA.ID == cmp.dsB.ID
	if repA, err = h.compareReport(ctx, cmp.a, !same, cmp.criterion); err != nil {
		return nil, nil, err
	}
	if repB, err = h.compareReport(ctx, cmp.b, !same, cmp.criterionB); err != nil {
		return nil, nil, err
	}
	return repA, alignedCriterion(repB, cmp.criterion, cmp.criterionB), nil
}

// matchSamples pairs A's samples with B's on the comparison's criterion
// (B aligned): by row
// on the same dataset, by sample id on a copy (report.SampleKey, the last
// of B's samples with a key winning), in A's order, then sorted largest
// disagreement first (on each criterion's 0-1 scale; samples missing a
// score on either side last).
func matchSamples(repA, repB *report.Report, cmp comparison, same bool) *matchedSamples {
	criterion := cmp.criterion
	m := &matchedSamples{humanA: humanFigures(repA, criterion), humanB: humanFigures(repB, criterion), repA: repA, repB: repB,
		missingA: missingScores(repA, criterion), missingB: missingScores(repB, criterion)}
	// report.SampleKey's pairing, keyed without building its strings: on
	// the same dataset by row, otherwise by sample id (the last of B's
	// samples with a key wins, as in report.PairScores).
	byRow, byID := map[int64]*report.SampleResult{}, map[string]*report.SampleResult{}
	if criterion < len(repB.Criteria) {
		ss := repB.Criteria[criterion].Samples
		for i := range ss {
			if same {
				byRow[ss[i].RowID] = &ss[i]
			} else {
				byID[ss[i].ExternalID] = &ss[i]
			}
		}
	}
	counterpart := func(s *report.SampleResult) (*report.SampleResult, bool) {
		if same {
			sb, ok := byRow[s.RowID]
			return sb, ok
		}
		sb, ok := byID[s.ExternalID]
		return sb, ok
	}
	var xs, ys []*float64
	var diffs []*float64
	otherHumans := 0 // matched samples whose human rating differs in B's report
	if criterion < len(repA.Criteria) {
		ss := repA.Criteria[criterion].Samples
		m.rows = make([]matchedRow, 0, len(ss))
		xs, ys, diffs = make([]*float64, 0, len(ss)), make([]*float64, 0, len(ss)), make([]*float64, 0, len(ss))
		for i := range ss {
			s := &ss[i]
			sb, ok := counterpart(s)
			if !ok {
				m.unmatched++
				continue
			}
			// Each score as the run's results and export write it
			// (report.FinalNumber: 1.95, not 1.9500000000000002), so a
			// sample's figure reads the same here as there; the
			// correlations below take the stored floats.
			a, b := report.FinalNumber(s.Final, s.Rounds), report.FinalNumber(sb.Final, sb.Rounds)
			d, _ := unitDifference(unit(a, cmp.critA), unit(b, cmp.critB))
			xs, ys = append(xs, s.Final), append(ys, sb.Final)
			row := matchedRow{rowID: s.RowID, rowIDB: sb.RowID, externalID: s.ExternalID, human: s.Human, a: a, b: b, fields: s.Fields, missA: -1, missB: -1}
			if !repA.Run.Finished() {
				row.missA = int(s.Missing)
			}
			if !repB.Run.Finished() {
				row.missB = int(sb.Missing)
			}
			m.rows = append(m.rows, row)
			diffs = append(diffs, d)
			if !sameRating(s.Human, sb.Human) {
				otherHumans++
			}
		}
	}
	m.humansNote = compareHumansNote(repA, repB, cmp, otherHumans, len(m.rows))
	order := disagreementOrder(diffs)
	sorted := make([]matchedRow, len(m.rows))
	for k, i := range order {
		sorted[k] = m.rows[i]
	}
	m.rows = sorted
	px, py, missing := stats.Pairs(xs, ys)
	m.pearson, m.spearman = stats.Pearson(px, py), stats.Spearman(px, py)
	m.pearson.Missing, m.spearman.Missing = missing, missing
	return m
}

// missingScores is a report's criterion's missing scores: its round-score
// counts, its samples without a final score and, while its run is going,
// those of them not judged yet (no round answered). Zero when the report
// has no such criterion.
func missingScores(rep *report.Report, criterion int) web.CompareMissing {
	if criterion >= len(rep.Criteria) {
		return web.CompareMissing{}
	}
	c := rep.Criteria[criterion]
	m := web.CompareMissing{Known: true, Samples: len(c.Samples)}
	going := !rep.Run.Finished()
	for _, s := range c.Samples {
		if s.Final != nil {
			continue
		}
		m.NoFinal++
		// A report built while the run goes counts each sample's missing
		// rounds (a stored one does not, and its run has ended).
		if going && s.Missing == 0 {
			m.Pending++
		}
	}
	c.Samples = nil
	m.Counts = c
	return m
}

// humanFigures is a report's criterion's figures (no samples: the view
// shows figures only) when it has human ratings, otherwise nil.
func humanFigures(rep *report.Report, criterion int) *report.CriterionReport {
	if criterion >= len(rep.Criteria) || !rep.Criteria[criterion].HasHuman {
		return nil
	}
	c := rep.Criteria[criterion]
	c.Samples = nil
	return &c
}

// compareShell is the comparison's runs, criteria and how they match,
// without figures.
func compareShell(cmp comparison) web.CompareView {
	v := web.CompareView{A: cmp.a, B: cmp.b, Criterion: cmp.criterion,
		CritA: cmp.critA, CritB: cmp.critB, SameDataset: cmp.dsA.ID == cmp.dsB.ID, Mismatch: cmp.Mismatch,
		DifferentCriteria: cmp.differentCriteria(),
		CostA:             compareCostOf(cmp.a, cmp.dsA.RowCount), CostB: compareCostOf(cmp.b, cmp.dsB.RowCount)}
	for i, cr := range cmp.a.RubricSnapshot.Criteria {
		if i == cmp.criterion || matchingCriterion(cr, cmp.b.RubricSnapshot.Criteria) >= 0 {
			v.Names = append(v.Names, web.CompareChoice{Index: i, Name: cr.Name})
		}
	}
	return v
}

// shownRounds are the round scores of the shown rows of each finished
// run (by its own row ids), so that their finals are written as the
// run's results and export write them (report.FinalNumber): a finished
// run's stored samples carry their final only. A run still going is read
// whole with its rounds (matchSamples writes its finals), so it has none
// here.
func (h *Handlers) shownRounds(ctx context.Context, cmp comparison, shown []matchedRow) (a, b map[int64][]*float64, err error) {
	var idsA, idsB []int64
	for _, r := range shown {
		if r.a != nil {
			idsA = append(idsA, r.rowID)
		}
		if r.b != nil {
			idsB = append(idsB, r.rowIDB)
		}
	}
	if cmp.a.Finished() {
		if a, err = h.DB.ListRoundScoresOfRows(ctx, cmp.a.ID, cmp.criterion, idsA); err != nil {
			return nil, nil, err
		}
	}
	if cmp.b.Finished() {
		if b, err = h.DB.ListRoundScoresOfRows(ctx, cmp.b.ID, cmp.criterionB, idsB); err != nil {
			return nil, nil, err
		}
	}
	return a, b, nil
}

// compareReport is a run's report as the compare page reads it: a finished
// run's summary with the stored scores of one criterion (scoresReport), a
// running run's full report.
func (h *Handlers) compareReport(ctx context.Context, run models.Run, externalIDs bool, criterion int) (*report.Report, error) {
	if !run.Finished() {
		return h.buildReport(ctx, run.ID, "")
	}
	sum, err := h.runSummary(ctx, run.ID, report.Options{})
	if err != nil {
		return nil, err
	}
	return h.scoresReport(ctx, run, sum, externalIDs, criterion)
}

// compareRowText fills the shown rows' ids and excerpts: from fields when
// the report had the text, otherwise read for these rows only from run
// A's dataset.
func (h *Handlers) compareRowText(ctx context.Context, cmp comparison, rows []web.CompareRow, fields map[int64][]evaluator.Text) error {
	var ids []int64
	for _, r := range rows {
		if _, ok := fields[r.RowID]; !ok {
			ids = append(ids, r.RowID)
		}
	}
	if len(ids) > 0 {
		text, err := h.DB.FindDatasetRows(ctx, cmp.dsA.ID, ids)
		if err != nil {
			return fmt.Errorf("read the text of the compared samples: %w", err)
		}
		shown := fieldsOf(cmp.a, cmp.dsA)
		for id, r := range text {
			fields[id] = r.Sample(shown).Fields
			for i := range rows {
				if rows[i].RowID == id {
					rows[i].ExternalID = r.ExternalID
				}
			}
		}
	}
	for i := range rows {
		rows[i].Excerpt = web.RunExcerpt(web.ExcerptField(fields[rows[i].RowID]), 110)
	}
	return nil
}

// agreementReading says which run agrees better with the humans, going by
// Pearson's r. The verdict follows the test whose p-value it quotes
// (Williams' t): a winner when that p is below 5%, otherwise that the
// test cannot tell the runs apart. When Zou's interval reads the other way
// (it contains 0 beside p < 0.05, or excludes 0 beside p ≥ 0.05) the
// sentence says so plainly instead of letting one figure contradict the
// other: the two are computed differently and can disagree near 5%.
func agreementReading(ds []stats.Difference, nameA, nameB string) string {
	var d stats.Difference
	for _, x := range ds {
		if x.Method == stats.MethodPearson {
			d = x
		}
	}
	p := d.P()
	if math.IsNaN(d.Diff) || math.IsNaN(p) {
		return "The difference is undefined: a run or the humans gave every sample the same score, or too few samples have all three scores."
	}
	better, worse := nameA, nameB
	if d.Diff < 0 {
		better, worse = nameB, nameA
	}
	test := "The paired test"
	if len(d.Tests) > 0 && d.Tests[0].Name != "" {
		test = d.Tests[0].Name
	}
	diff := web.SignedCoef(d.Diff, 3)
	pText := web.PValueText(p)
	// The interval is read as printed (web.IntervalBound), so a bound
	// printed 0.000 counts as touching 0 and one printed +0.0003 as above
	// it.
	lo, hi := web.BoundAsPrinted(d.CILow), web.BoundAsPrinted(d.CIHigh)
	noInterval := math.IsNaN(lo) || math.IsNaN(hi)
	excludes := !noInterval && (lo > 0 || hi < 0)
	ci := "95% interval " + web.DifferenceInterval(d.CILow, d.CIHigh)
	significant := p < report.SignificanceLevel
	switch {
	case significant && excludes:
		return fmt.Sprintf("%s agrees better with the humans than %s: A − B in Pearson r is %s (%s, %s).",
			better, worse, diff, ci, pText)
	case significant && noInterval:
		return fmt.Sprintf("%s agrees better with the humans than %s (%s, %s): A − B in Pearson r is %s; its 95%% interval could not be computed.",
			better, worse, test, pText, diff)
	case significant:
		return fmt.Sprintf("%s finds that %s agrees better with the humans than %s (%s), but the 95%% interval of A − B in Pearson r (%s), %s to %s, still includes no difference: the evidence is borderline, and more samples would settle it.",
			test, better, worse, pText, diff, web.IntervalBound(d.CILow), web.IntervalBound(d.CIHigh))
	case excludes:
		return fmt.Sprintf("%s does not find a difference between the two runs (%s), though the 95%% interval of A − B in Pearson r (%s), %s to %s, lies entirely on one side of 0: the evidence is borderline, and more samples would settle it.",
			test, pText, diff, web.IntervalBound(d.CILow), web.IntervalBound(d.CIHigh))
	}
	return fmt.Sprintf("The data cannot tell the two runs apart: A − B in Pearson r is %s (%s, %s), within what chance alone gives on these samples.",
		diff, ci, pText)
}

// compareSample shows one sample as both runs judged it: the text, the
// human rating, and each run's per-round scores and analyses side by side.
func (h *Handlers) compareSample(c echo.Context) error {
	cmp, err := h.loadComparison(c)
	if err != nil {
		return h.refuseComparison(c, err)
	}
	rowID, err := strconv.ParseInt(c.QueryParam("row"), 10, 64)
	if err != nil || rowID <= 0 {
		return models.Errorf(models.EInvalid, "choose a sample to compare (row is missing)")
	}
	v, err := h.compareSampleView(c, cmp, rowID)
	if err != nil {
		return err
	}
	if err := h.sayWhyCompareHumanMissing(c.Request().Context(), cmp, &v, readerMember); err != nil {
		return err
	}
	v.ProjectCrumb = h.projectCrumb(c.Request().Context(), h.workspaceID(c), cmp.a.ProjectID)
	return render(c, http.StatusOK, web.CompareSamplePage(v))
}

// compareSampleView is one sample as both runs judged it.
func (h *Handlers) compareSampleView(c echo.Context, cmp comparison, rowID int64) (web.CompareSampleView, error) {
	ctx := c.Request().Context()
	rowsA, err := h.DB.FindDatasetRows(ctx, cmp.dsA.ID, []int64{rowID})
	if err != nil {
		return web.CompareSampleView{}, err
	}
	rowA, ok := rowsA[rowID]
	if !ok {
		return web.CompareSampleView{}, models.Errorf(models.ENotFound, "sample %d is not part of run %d's dataset", rowID, cmp.a.ID)
	}
	rowB := rowA
	if cmp.dsB.ID != cmp.dsA.ID {
		// One row through the (dataset, sample id) index, not the copy's
		// every row.
		r, found, err := h.DB.FindDatasetRowByExternalID(ctx, cmp.dsB.ID, rowA.ExternalID)
		if err != nil {
			return web.CompareSampleView{}, err
		}
		rowB = r
		if !found {
			return web.CompareSampleView{}, models.Errorf(models.ENotFound, "run %d's dataset has no sample %s", cmp.b.ID, web.Quoted(rowA.ExternalID))
		}
	}
	v := web.CompareSampleView{Page: page(c, "Sample "+rowA.ExternalID+" in two runs"), A: cmp.a, B: cmp.b, Criterion: cmp.criterion,
		CritA: cmp.critA, CritB: cmp.critB, ExternalID: rowA.ExternalID,
		Fields: rowA.Sample(fieldsOf(cmp.a, cmp.dsA)).Fields}
	if cmp.dsB.ID != cmp.dsA.ID {
		v.FieldsB = rowB.Sample(fieldsOf(cmp.b, cmp.dsB)).Fields
	}
	// The human rating the comparison pairs with the scores: run A's
	// report's (PairScores), which with browser reviews counted is the
	// mean of the imported rating and the reviewers', not the imported
	// column the row holds (as on the run's own sample page).
	humans, err := h.reportHumans(ctx, cmp.a, []int64{rowA.ID})
	if err != nil {
		return web.CompareSampleView{}, err
	}
	v.HumanSource, v.HumanPending = humans.source, humans.pending
	switch {
	case humans.pending:
	case humans.byCriterion != nil:
		if cmp.criterion < len(humans.byCriterion) {
			v.Human = humans.byCriterion[cmp.criterion][rowA.ID]
		}
	default:
		v.Human = models.HumanOf(rowA, cmp.critA)
	}
	if v.SideA, err = h.sampleSide(ctx, cmp.a, rowA.ID, cmp.criterion, cmp.critA); err != nil {
		return web.CompareSampleView{}, err
	}
	if v.SideB, err = h.sampleSide(ctx, cmp.b, rowB.ID, cmp.criterionB, cmp.critB); err != nil {
		return web.CompareSampleView{}, err
	}
	return v, nil
}

// sayWhyCompareHumanMissing says why a compared sample has no human
// rating (humanMissingReason), to reader: the comparison's rating is run
// A's report's, so the reason is too. Nothing while the ratings are being
// prepared.
func (h *Handlers) sayWhyCompareHumanMissing(ctx context.Context, cmp comparison, v *web.CompareSampleView, reader humanReader) error {
	if v.HumanPending || (v.Human != nil && !math.IsNaN(*v.Human)) {
		return nil
	}
	hr, err := h.humanReasonsOf(ctx, cmp.a, reader)
	if err != nil {
		return err
	}
	k := roundKey{v.SideA.RowID, cmp.criterion}
	why, err := hr.why(ctx, []roundKey{k})
	if err != nil {
		return err
	}
	v.HumanMissing = why[k]
	return nil
}

func fieldsOf(run models.Run, ds models.Dataset) []evaluator.Field {
	if len(run.RubricSnapshot.Fields) > 0 {
		return run.RubricSnapshot.Fields
	}
	return ds.Fields
}

// sampleSide is one run's rounds on one sample and criterion.
func (h *Handlers) sampleSide(ctx context.Context, run models.Run, rowID int64, criterion int, crit evaluator.Criterion) (web.CompareSide, error) {
	side := web.CompareSide{Run: run, RowID: rowID, MethodLabel: methods.Label(run.Method),
		Range: scaleText(crit)}
	scores, err := h.DB.ListRowScores(ctx, run.ID, rowID)
	if err != nil {
		return side, err
	}
	var sum float64
	var k int
	for _, s := range scores {
		if s.CriterionIndex != criterion {
			continue
		}
		side.Rounds = append(side.Rounds, web.RunSampleRound{Round: s.Round + 1, Score: s.Score, Analysis: s.Analysis, BatchID: s.BatchID, Label: s.Label})
		if s.Score != nil {
			sum += *s.Score
			k++
		}
	}
	if k > 0 {
		m := sum / float64(k)
		side.Final = &m
	}
	return side, nil
}

// compareCostOf is what a compared run's calls cost: its calls and the
// tokens it paid for, its cost in the words of its run page
// (runCostText), and its cost per sample of its dataset (samples), as the
// experiment table computes it: calls the answer cache answered count at
// what they cost when first paid for when that is known ("as if paid"),
// and a run answered partly from the cache without it shows what it paid.
func compareCostOf(run models.Run, samples int) web.CompareCost {
	cc := web.CompareCost{Calls: run.Calls, Tokens: run.PromptTokens + run.CompletionTokens, Cost: runCostText(run), PerSample: "unknown"}
	prompt, completion, full := run.FullTokens()
	cost := run.CostSoFar()
	cc.AsIfPaid = run.CachedCalls > 0 && full
	if cc.AsIfPaid {
		cost = runner.Cost(run.JudgeSnapshot, prompt, completion)
	}
	switch {
	case run.Simulated:
		// The cost line says "$0 (simulated judge)" once (cc.Cost).
		cc.Simulated = true
		cc.PerSample = "$0"
	case run.WhollyCached() && !full:
		cc.PerSample = "cached"
	case cost == nil || samples <= 0:
	default:
		c := *cost / float64(samples)
		cc.PerSampleUSD = &c
		cc.PerSample = dollars(c)
		switch {
		case cc.AsIfPaid:
			cc.PerSample += " as if paid"
		case run.PartlyCached():
			cc.PerSample += " paid (" + cacheShareText(run) + ")"
		}
	}
	return cc
}

// disagreementOrder orders the compared samples, given each one's A − B on
// the 0 to 1 scale (nil when either score is missing): largest
// disagreement first, samples missing a score on either side last, and
// ties in A's order (a stable sort, as the page always sorted). Two
// differences that are the same decimal count as a tie even when their
// floats differ in the last bits: 2.2 − 1.9333… and 2.1333… − 1.8666… on
// a 1 to 3 scale are 0.13333333333333341 and 0.1333333333333333, and
// sorting the floats put the second group's samples after the first's
// whatever A's order. Differences are compared rounded to nine decimals,
// far below the two the page shows and far above the noise of the
// arithmetic (about 1e-16).
func disagreementOrder(diffs []*float64) []int {
	type place struct {
		i      int
		key    float64
		scored bool
	}
	order := make([]place, len(diffs))
	for i, d := range diffs {
		order[i] = place{i: i, scored: d != nil}
		if d != nil {
			order[i].key = math.Round(math.Abs(*d) * 1e9)
		}
	}
	slices.SortStableFunc(order, func(x, y place) int {
		switch {
		case x.scored != y.scored:
			if x.scored {
				return -1
			}
			return 1
		case !x.scored:
			return 0
		case x.key > y.key:
			return -1
		case y.key > x.key:
			return 1
		}
		return 0
	})
	out := make([]int, len(order))
	for k, p := range order {
		out[k] = p.i
	}
	return out
}
