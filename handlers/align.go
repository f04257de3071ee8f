package handlers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/evaluator/excerpt"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// This file holds the alignment of the judge with the humans: from a
// finished run, split its dataset into calibration and held-out samples,
// draft clearer level descriptions and labelled examples from the worst
// calibration disagreements, let the person edit and accept the draft as a
// new rubric version, and compare the old and new versions on the held-out
// samples. It also shows a rubric's versions and the runs that used them.

// maxExampleRows is how many example rows the draft form offers: the
// draft's examples plus empty rows to add more, up to evaluator.MaxExamples.
const maxExampleRows = evaluator.MaxExamples

// excerptRunes is how much of a sample's text the disagreement table shows.
// Why 240: about three lines, enough to recognise the sample.
const excerptRunes = 240

// alignForm is the start form as typed.
type alignForm struct {
	criterion, seed, heldOutPercent string
	errs                            []string
}

// defaultAlignForm is the start form as first shown: the run's seed, the
// default share, and the first criterion that can be aligned. The first
// criterion was chosen whatever it was: when it had no human ratings its
// option was both chosen and disabled, a browser sends no criterion for
// it, and "Split and draft" answered "choose one of the run's criteria".
func defaultAlignForm(run models.Run) alignForm {
	ci := max(slices.IndexFunc(run.RubricSnapshot.Criteria, alignable), 0)
	return alignForm{criterion: strconv.Itoa(ci), seed: strconv.FormatInt(run.Settings.Seed, 10),
		heldOutPercent: strconv.Itoa(int(align.DefaultHeldOutShare * 100))}
}

// alignProblem says why a run cannot be aligned from, "" when it can.
func alignProblem(run models.Run) string {
	switch {
	case !run.Completed():
		return fmt.Sprintf("Run %d is %s: alignment starts from a run that went through all its samples.", run.ID, models.RunStatusLabel(run.Status))
	case run.RubricID == nil:
		return fmt.Sprintf("Run %d was not launched with a stored rubric (a reworded variant or a command-line run), so there is no rubric to make a new version of.", run.ID)
	case !hasHumanRatings(run):
		return fmt.Sprintf("Run %d has no human ratings: none of its criteria names a human rating column, so there are no disagreements between the judge and people to learn from.", run.ID)
	}
	return ""
}

// alignNoHumanNote says, beside a criterion that cannot be aligned from,
// why; "" when it can. A criterion whose human rating is its annotators'
// mean (models.MeansAnnotators) can: the alignment learns from that mean,
// as the run's report computes it.
func alignNoHumanNote(c evaluator.Criterion) string {
	if alignable(c) {
		return ""
	}
	return " (no human ratings)"
}

// alignable reports whether criterion c has human ratings to align with:
// a human rating column, or annotator columns whose readable ratings the
// report averages (models.MeansAnnotators).
func alignable(c evaluator.Criterion) bool {
	return c.HumanColumn != "" || models.MeansAnnotators(c)
}

// meanOf names the annotators' mean a criterion's human rating is
// ("mean of a, b, c"), "" when it is a column's.
func meanOf(c evaluator.Criterion) string {
	if models.MeansAnnotators(c) {
		return models.AnnotatorMeanKey(c.AnnotatorColumns)
	}
	return ""
}

// alignHumanNote says, for a criterion whose human rating is its
// annotators' mean, what the alignment's "Humans" figures are; "" for a
// criterion with a human column.
func alignHumanNote(c evaluator.Criterion) string {
	if !models.MeansAnnotators(c) {
		return ""
	}
	return fmt.Sprintf("The human rating of each sample is the annotators' mean (%s): the mean of its readable ratings in %s, as the run's report computes it. "+
		"A sample none of them rated has no human rating and is left out of the disagreements, the split's counts of rated samples and the held-out comparison.",
		models.AnnotatorMeanKey(c.AnnotatorColumns), strings.Join(c.AnnotatorColumns, ", "))
}

// hasHumanRatings reports whether a criterion of the run has human
// ratings to align with (alignable).
func hasHumanRatings(run models.Run) bool {
	return slices.ContainsFunc(run.RubricSnapshot.Criteria, alignable)
}

func (h *Handlers) alignStartView(c echo.Context, run models.Run, f alignForm) web.AlignStartView {
	ctx := c.Request().Context()
	v := web.AlignStartView{Page: page(c, "Align the judge: run "+strconv.FormatInt(run.ID, 10)), RunID: run.ID, RunName: run.Name,
		Problem: alignProblem(run), Seed: f.seed, HeldOutPercent: f.heldOutPercent, Criterion: f.criterion, Errors: f.errs,
		Simulated: run.Simulated, MinHeldOut: align.MinHeldOut, ProjectCrumb: h.projectCrumb(ctx, h.workspaceID(c), run.ProjectID)}
	for i, cr := range run.RubricSnapshot.Criteria {
		v.Criteria = append(v.Criteria, web.AlignCriterionOption{Index: i, Name: cr.Name, HasHuman: alignable(cr), NoHumanNote: alignNoHumanNote(cr), MeanOf: meanOf(cr)})
	}
	if run.RubricID != nil && !hasHumanRatings(run) {
		if r, err := h.DB.FindRubric(ctx, h.workspaceID(c), *run.RubricID); err == nil {
			v.NoHumansRubric = r.ID
		}
	}
	if run.RubricID != nil {
		if as, err := h.DB.ListRubricAlignments(ctx, h.workspaceID(c), *run.RubricID); err == nil {
			for _, a := range as {
				if a.SourceRunID == run.ID {
					v.Existing = append(v.Existing, alignmentLink(a, run.RubricSnapshot.Criteria))
				}
			}
		}
	}
	return v
}

func alignmentLink(a models.Alignment, crits []evaluator.Criterion) web.AlignmentLink {
	l := web.AlignmentLink{ID: a.ID, Status: a.Status, BaseVersion: a.BaseVersion}
	if a.CriterionIndex < len(crits) {
		l.Criterion = crits[a.CriterionIndex].Name
	}
	if a.NewVersion != nil {
		l.NewVersion = *a.NewVersion
	}
	return l
}

func (h *Handlers) showAlignStart(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	v := h.alignStartView(c, run, defaultAlignForm(run))
	v.Reviewers, err = h.reviewerAgreements(c.Request().Context(), h.workspaceID(c), run)
	if p := preparingOf(err); p != nil {
		// A large run that just finished: the judge's final scores are
		// being stored, and the reviewers' figures show once they are.
		v.Preparing, err = preparingView(p), nil
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AlignStartPage(v))
}

// startAlignment splits the run's dataset, drafts from the calibration
// disagreements and stores the alignment.
func (h *Handlers) startAlignment(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	f := alignForm{criterion: strings.TrimSpace(c.FormValue("criterion")), seed: strings.TrimSpace(c.FormValue("seed")),
		heldOutPercent: strings.TrimSpace(c.FormValue("held_out_percent"))}
	failed := func(msg string) error {
		f.errs = append(f.errs, msg)
		return render(c, http.StatusUnprocessableEntity, web.AlignStartPage(h.alignStartView(c, run, f)))
	}
	if p := alignProblem(run); p != "" {
		return failed(p)
	}
	ci, err := strconv.Atoi(f.criterion)
	if err != nil || ci < 0 || ci >= len(run.RubricSnapshot.Criteria) {
		return failed("Criterion: choose one of the run's criteria.")
	}
	crit := run.RubricSnapshot.Criteria[ci]
	if !alignable(crit) {
		return failed(fmt.Sprintf("Criterion: %s has no human ratings in this dataset, so there are no disagreements to learn from.", crit.Name))
	}
	seed, err := strconv.ParseInt(f.seed, 10, 64)
	if err != nil {
		return failed(fmt.Sprintf("Seed: %s is not a whole number.", web.Quoted(f.seed)))
	}
	// A decimal comma ("33,5") is read as the other forms read it.
	pct, problem := typedDecimal(f.heldOutPercent, "33.5")
	switch {
	case problem != "":
		return failed(fmt.Sprintf("Held-out share: %s %s; use a percentage from 10 to 90.", web.Quoted(f.heldOutPercent), problem))
	case pct < 10 || pct > 90:
		return failed(fmt.Sprintf("Held-out share: %g is out of range; use a percentage from 10 to 90.", pct))
	}
	rubric, err := h.DB.FindRubric(ctx, ws, *run.RubricID)
	if err != nil {
		if models.ErrorCode(err) == models.ENotFound {
			return failed(fmt.Sprintf("The rubric of run %d no longer exists.", run.ID))
		}
		return err
	}
	plan, err := h.planAlignment(ctx, run, ci, seed, pct/100, false)
	if p := preparingOf(err); p != nil {
		// A large run that just finished: the split is made from its
		// stored results, which are being computed now.
		v := h.alignStartView(c, run, f)
		v.Preparing = preparingView(p)
		c.Response().Header().Set("Retry-After", strconv.Itoa(preparingRetrySeconds))
		return render(c, http.StatusServiceUnavailable, web.AlignStartPage(v))
	}
	if err != nil {
		return err
	}
	calIDs, heldIDs, worst := plan.calibration, plan.heldOut, plan.worst
	if plan.rated < align.MinHeldOut {
		// No share helps: say so rather than suggest a larger one.
		return failed(fmt.Sprintf("This run has %d %s with a human rating on %s; the held-out part alone needs at least %d, whatever its share. Align the judge on a run of a dataset with more rated samples.",
			plan.rated, plural(plan.rated, "sample", "samples"), crit.Name, align.MinHeldOut))
	}
	if plan.heldRated < align.MinHeldOut {
		return failed(fmt.Sprintf("The held-out part would have %d samples with a human rating; at least %d are needed to measure a change. Use a larger dataset or a larger held-out share.",
			plan.heldRated, align.MinHeldOut))
	}
	if plan.items == 0 {
		return failed("No calibration sample has both a judge score and a human rating: there is nothing to draft from.")
	}
	draft, source := h.draftAlignment(ctx, run, crit, worst)
	draft = examplesOnRubricScale(draft, crit)
	base := rubric.Version
	if run.RubricVersion != nil {
		base = *run.RubricVersion
	}
	a := models.Alignment{WorkspaceID: ws, ProjectID: run.ProjectID, RubricID: rubric.ID, SourceRunID: run.ID, CriterionIndex: ci,
		Seed: seed, CalibrationRowIDs: calIDs, HeldOutRowIDs: heldIDs, BaseVersion: base, Draft: draft, DraftSource: source}
	if err := h.DB.CreateAlignment(ctx, &a); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/alignments/%d", a.ID), fmt.Sprintf("Drafted a change of %s from the %d largest disagreements of the calibration part. Read and edit it, then accept it.", crit.Name, len(worst)))
}

// alignmentPlan is the split of a run's samples on one criterion and the
// calibration disagreements a draft starts from.
type alignmentPlan struct {
	calibration, heldOut []int64
	// rated counts the samples with a human rating, heldRated the
	// held-out ones among them, items the calibration samples with both a
	// judge score and a human rating. They are counted as far as the
	// start's checks need: from a finished run's stored results rated
	// and heldRated stop at align.MinHeldOut held-out rated samples (exact
	// below it) and items at the disagreements read (0 only when there is
	// none); read from every score (planFromScores) they are exact.
	heldRated, items, rated int
	// worst are the align.DraftCases largest calibration disagreements,
	// with their samples' ids and text.
	worst []align.Item
}

// planAlignment splits criterion ci of run by seed into calibration and
// held-out parts (share held out) and finds the largest calibration
// disagreements; only their rows' text is read. From a finished run's
// stored results (storedPlan) it reads the ids of the samples, the rated
// samples down the order by human rating until the checks are met, and
// the disagreements down the order by difference: never every stored
// result. Otherwise, and with full (the run's full report, which tests
// compare), every sample's score is read (planFromScores).
func (h *Handlers) planAlignment(ctx context.Context, run models.Run, ci int, seed int64, share float64, full bool) (alignmentPlan, error) {
	rr := h.newRunReviews()
	if !full {
		sum, err := h.storedResults(ctx, run, rr)
		if err != nil {
			return alignmentPlan{}, err
		}
		if sum != nil && storedAlignable(sum, ci) {
			return h.storedPlan(ctx, sum, ci, seed, share)
		}
	}
	return h.planFromScores(ctx, run, ci, seed, share, full, rr)
}

// planFromScores is planAlignment from every sample's score (alignSamplesOf:
// the stored results of a finished run, unless full, else the full report).
func (h *Handlers) planFromScores(ctx context.Context, run models.Run, ci int, seed int64, share float64, full bool, rr *runReviews) (alignmentPlan, error) {
	as, err := h.alignSamplesOf(ctx, run, ci, false, full, rr)
	if err != nil {
		return alignmentPlan{}, err
	}
	ids := make([]int64, len(as.scores))
	for i, s := range as.scores {
		ids[i] = s.RowID
	}
	var p alignmentPlan
	p.calibration, p.heldOut = align.Split(ids, seed, share)
	held := idSet(p.heldOut)
	onScale, scaleNote := humansOnJudgeScale(as.rep, ci, run.RubricSnapshot.Criteria[ci])
	var items []align.Item
	for _, s := range as.scores {
		if s.Human != nil {
			p.rated++
		}
		switch {
		case held[s.RowID]:
			if s.Human != nil {
				p.heldRated++
			}
		case s.Final != nil && s.Human != nil:
			// The order of disagreements reads the scores and rows alone:
			// the text is read for the few the draft shows.
			items = append(items, align.Item{RowID: s.RowID, Judge: *s.Final, Human: onScale(*s.Human), Given: *s.Human, Mapped: scaleNote != ""})
		}
	}
	p.items = len(items)
	worst := align.Disagreements(items)
	p.worst, err = withTexts(ctx, as, worst[:min(len(worst), align.DraftCases)])
	return p, err
}

// humansOnJudgeScale puts criterion ci's human ratings on the judge's
// scale (crit's range) as rep, the run's report, does for its errors
// (report.HumanScale): as given, or mapped linearly from the span it names.
// The disagreements are judge − humans on one scale, and a draft's
// examples are labelled with the humans' rating on the criterion's range
// (examplesOnRubricScale), which the accept requires (align.CheckExamples). Before, ratings on
// another scale were taken as given: on FED's Overall (0.4 to 4) judged on
// the paper's 1 to 3, the largest "disagreements" were the scales' offset
// and the draft's examples (scores 0.4 and 4) could not be accepted. The
// note says how they are shown, "" when as given.
func humansOnJudgeScale(rep *report.Report, ci int, crit evaluator.Criterion) (func(float64) float64, string) {
	asGiven := func(h float64) float64 { return h }
	if rep == nil || ci < 0 || ci >= len(rep.Criteria) {
		return asGiven, ""
	}
	hs := rep.Criteria[ci].HumanScale
	if !hs.Mapped || !(hs.Hi > hs.Lo) {
		return asGiven, ""
	}
	// Rounded to four decimals (rescale): an example's score reads 1.1111,
	// not 1.1111111111111112.
	return func(h float64) float64 { return rescale(h, hs.Lo, hs.Hi, crit.Lo, crit.Hi) },
		fmt.Sprintf("The human ratings are shown on the judge's scale, %s: they are mapped linearly from %s, as the run's report compares them (%s becomes %s, %s becomes %s). The examples' scores are the same ratings on the rubric's %s.",
			rangeText(crit.Lo, crit.Hi), hs.Name, formatNumber(hs.Lo), formatNumber(crit.Lo), formatNumber(hs.Hi), formatNumber(crit.Hi),
			scaleText(onRubricScale(crit)))
}

// onRubricScale is crit on the rubric's range (Criterion.HumanScale), the
// range its labelled examples are scored on and stored with: a method with
// a scale of its own (LLM-Eval's 0 to 5) judged it on another, and its
// prompts map the examples' scores onto that.
func onRubricScale(crit evaluator.Criterion) evaluator.Criterion {
	hs := crit.HumanScale()
	crit.Lo, crit.Hi, crit.RubricScale = hs.Lo, hs.Hi, nil
	return crit
}

// examplesOnRubricScale moves a draft's example scores, the humans'
// ratings on the judge's scale (humansOnJudgeScale), onto the rubric's
// range, where the new version stores them (unchanged when the judge's
// scale is the rubric's).
func examplesOnRubricScale(d align.Draft, crit evaluator.Criterion) align.Draft {
	hs := crit.HumanScale()
	if (hs.Lo == crit.Lo && hs.Hi == crit.Hi) || !(crit.Hi > crit.Lo) {
		return d
	}
	d.Examples = slices.Clone(d.Examples)
	for i := range d.Examples {
		d.Examples[i].Score = rescale(d.Examples[i].Score, crit.Lo, crit.Hi, hs.Lo, hs.Hi)
	}
	return d
}

// withTexts gives items their samples' ids and text.
func withTexts(ctx context.Context, as alignSamples, items []align.Item) ([]align.Item, error) {
	if len(items) == 0 {
		return items, nil
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.RowID
	}
	texts, err := as.texts(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range items {
		t := texts[items[i].RowID]
		items[i].SampleID, items[i].Fields = t.ExternalID, t.Fields
	}
	return items, nil
}

// draftAlignment drafts the change: the simulated judge gets the
// product's deterministic template (it is not a language model and could
// not write one); a real judge is asked itself, and when its answer cannot
// be had or read, the template is used and the notes say why.
func (h *Handlers) draftAlignment(ctx context.Context, run models.Run, crit evaluator.Criterion, worst []align.Item) (align.Draft, string) {
	if run.Simulated || run.JudgeID == nil {
		return align.TemplateDraft(crit, worst), "template (the simulated judge does not write drafts)"
	}
	fallback := func(why string) (align.Draft, string) {
		d := align.TemplateDraft(crit, worst)
		d.Notes = "The judge's draft could not be used (" + why + "); this is the product's template instead. " + d.Notes
		return d, "template"
	}
	j, err := h.DB.FindJudge(ctx, run.WorkspaceID, *run.JudgeID)
	if err != nil {
		return fallback("the judge no longer exists")
	}
	client, err := h.judgeClient(ctx, j)
	if err != nil {
		return fallback(err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, stepsCallTimeout)
	defer cancel()
	resp, err := client.Complete(ctx, judge.Request{Messages: align.BuildDraftPrompt(run.RubricSnapshot, crit, worst), Temperature: 0})
	if err != nil {
		return fallback(err.Error())
	}
	d, err := align.ParseDraft(resp.Text(), crit, worst)
	if err != nil {
		return fallback(err.Error())
	}
	return d, j.Name
}

func idSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// alignmentParts loads an alignment with its source run and criterion.
func (h *Handlers) alignmentParts(c echo.Context) (models.Alignment, models.Run, evaluator.Criterion, error) {
	ctx := c.Request().Context()
	id, err := paramID(c, "id")
	if err != nil {
		return models.Alignment{}, models.Run{}, evaluator.Criterion{}, err
	}
	a, err := h.DB.FindAlignment(ctx, h.workspaceID(c), id)
	if err != nil {
		return a, models.Run{}, evaluator.Criterion{}, err
	}
	run, err := h.DB.FindRun(ctx, h.workspaceID(c), a.SourceRunID)
	if err != nil {
		return a, run, evaluator.Criterion{}, err
	}
	if a.CriterionIndex >= len(run.RubricSnapshot.Criteria) {
		return a, run, evaluator.Criterion{}, models.Errorf(models.EInternal, "alignment %d names a criterion run %d does not have", a.ID, run.ID)
	}
	return a, run, run.RubricSnapshot.Criteria[a.CriterionIndex], nil
}

// draftForm is the draft as the person edited it.
type draftForm struct {
	low, middle, high string
	examples          []web.AlignExampleRow
}

func draftFormOf(d align.Draft) draftForm {
	f := draftForm{low: d.Levels.Low, middle: d.Levels.Middle, high: d.Levels.High}
	for _, ex := range d.Examples {
		f.examples = append(f.examples, web.AlignExampleRow{SampleID: ex.SampleID, Score: formatNumber(ex.Score), Reason: ex.Reason})
	}
	return f
}

func (h *Handlers) showAlignment(c echo.Context) error {
	a, run, crit, err := h.alignmentParts(c)
	if err != nil {
		return err
	}
	v, err := h.alignmentView(c, a, run, crit, draftFormOf(a.Draft), nil)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AlignmentPage(v))
}

func (h *Handlers) alignmentView(c echo.Context, a models.Alignment, run models.Run, crit evaluator.Criterion, f draftForm, errs []string) (web.AlignmentView, error) {
	return h.alignmentViewWith(c, a, run, crit, f, errs, false)
}

// alignmentViewWith is alignmentView; with full, the runs' samples are read
// from their full reports even when their stored results would do (tests
// compare the two).
func (h *Handlers) alignmentViewWith(c echo.Context, a models.Alignment, run models.Run, crit evaluator.Criterion, f draftForm, errs []string, full bool) (web.AlignmentView, error) {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	v := web.AlignmentView{Page: page(c, fmt.Sprintf("Alignment %d", a.ID)), ID: a.ID, RunID: run.ID, RunName: run.Name,
		RubricID: a.RubricID, Criterion: crit.Name, Range: scaleText(onRubricScale(crit)), Seed: a.Seed,
		CalibrationN: len(a.CalibrationRowIDs), HeldOutN: len(a.HeldOutRowIDs), BaseVersion: a.BaseVersion, Status: a.Status,
		Accepted: a.Status == models.AlignmentAccepted, DraftSource: a.DraftSource, Notes: a.Draft.Notes, Simulated: run.Simulated,
		Low: f.low, Middle: f.middle, High: f.high, Errors: errs, MeanOf: meanOf(crit), HumanNote: alignHumanNote(crit)}
	if r, err := h.DB.FindRubric(ctx, ws, a.RubricID); err == nil {
		v.RubricName, v.Revision = r.Name, r.Revision()
	}
	if err := h.fillAlignmentHumans(ctx, &v, a, run); err != nil {
		return v, err
	}
	if a.NewVersion != nil {
		v.NewVersion = *a.NewVersion
	}
	v.Examples = f.examples
	for len(v.Examples) < maxExampleRows && (len(v.Examples) < len(f.examples)+2 || len(v.Examples) == 0) {
		v.Examples = append(v.Examples, web.AlignExampleRow{})
	}
	if v.Accepted {
		v.Examples = f.examples
	}
	// Each run's browser reviews are read once for the page (runReviews).
	rr := h.newRunReviews()
	if !full {
		sum, err := h.storedResults(ctx, run, rr)
		if p := preparingOf(err); p != nil {
			v.Preparing = preparingView(p)
			return v, nil
		}
		if err != nil {
			return v, err
		}
		if sum != nil && storedAlignable(sum, a.CriterionIndex) {
			if err := h.fillStoredCases(c, &v, sum, a); err != nil {
				return v, err
			}
			if !v.Accepted {
				return v, nil
			}
			return v, h.fillHeldOut(ctx, &v, a, full, rr)
		}
	}
	as, err := h.alignSamplesOf(ctx, run, a.CriterionIndex, true, full, rr)
	if p := preparingOf(err); p != nil {
		// The split and the draft are stored; the disagreements and the
		// held-out ids show once the run's results are stored again (its
		// human source was changed since).
		v.Preparing = preparingView(p)
		return v, nil
	}
	if err != nil {
		return v, err
	}
	held := idSet(a.HeldOutRowIDs)
	for _, smp := range as.scores {
		if held[smp.RowID] {
			v.HeldOutIDs = append(v.HeldOutIDs, smp.ExternalID)
		}
	}
	cal := idSet(a.CalibrationRowIDs)
	onScale, scaleNote := humansOnJudgeScale(as.rep, a.CriterionIndex, crit)
	v.HumanScaleNote = scaleNote
	var items []align.Item
	for _, s := range as.scores {
		if cal[s.RowID] && s.Final != nil && s.Human != nil {
			items = append(items, align.Item{RowID: s.RowID, SampleID: s.ExternalID, Judge: *s.Final, Human: onScale(*s.Human), Given: *s.Human, Mapped: scaleNote != ""})
		}
	}
	worst := align.Disagreements(items)
	worst, err = withTexts(ctx, as, worst[:min(len(worst), align.DraftCases)])
	if err != nil {
		return v, err
	}
	for _, it := range worst {
		v.Worst = append(v.Worst, web.AlignCase{SampleID: it.SampleID, Judge: formatScore(it.Judge), Human: formatScore(it.Human),
			Gap: web.Signed(it.Gap(), 2), Text: fieldsExcerpt(it.Fields)})
	}
	if !v.Accepted {
		return v, nil
	}
	if err := h.fillHeldOut(ctx, &v, a, full, rr); err != nil {
		return v, err
	}
	return v, nil
}

// fillHeldOut adds the held-out runs and, once both went through every
// sample, the before/after comparison of each correlation measure. The
// runs' browser reviews are read once, through rr.
func (h *Handlers) fillHeldOut(ctx context.Context, v *web.AlignmentView, a models.Alignment, full bool, rr *runReviews) error {
	ws := workspaceOf(ctx)
	var runs [2]*models.Run
	for i, id := range []*int64{a.BeforeRunID, a.AfterRunID} {
		if id == nil {
			continue
		}
		r, err := h.DB.FindRun(ctx, ws, *id)
		if err != nil {
			if models.ErrorCode(err) == models.ENotFound {
				continue
			}
			return err
		}
		runs[i] = &r
		link := web.AlignRunLink{ID: r.ID, Name: r.Name, Status: r.Status}
		if r.RubricVersion != nil {
			link.Version = *r.RubricVersion
		}
		if i == 0 {
			v.BeforeRun = &link
		} else {
			v.AfterRun = &link
		}
	}
	if runs[0] == nil || runs[1] == nil {
		note, refresh, failed, err := h.preparingHeldOutNote(ctx, a)
		if err != nil {
			return err
		}
		switch {
		case refresh:
			v.CompareNote, v.HeldOutPreparing = note, true
		case failed:
			v.CompareNote, v.CanRelaunch = note, true
		default:
			v.CompareNote = "The held-out runs were not launched (or were deleted). Launch them again to compare the versions."
			v.CanRelaunch = true
		}
		return nil
	}
	if !runs[0].Completed() || !runs[1].Completed() {
		v.CompareNote = "The held-out runs have not finished yet: the comparison appears here when both have."
		return nil
	}
	rc := h.reports
	// full reads the full reports (tests compare the two paths): it neither
	// reads nor fills the cache.
	cacheable := rc != nil && !full && runs[0].FinishedAt != nil && runs[1].FinishedAt != nil
	var key heldOutKey
	if cacheable {
		key = heldOutKey{alignment: a.ID, seed: a.Seed, pairKey: finishedPairKey(*runs[0], *runs[1], true)}
		rc.mu.Lock()
		res, ok := rc.heldOut[key]
		rc.mu.Unlock()
		if ok {
			v.Comparisons, v.HumansNote, v.BeforeHumansNote = res.comparisons, res.humansNote, res.beforeNote
			return nil
		}
	}
	// The runs' stored results are read first: while they are being
	// prepared there is nothing to compare, in the request or not.
	samples := len(a.HeldOutRowIDs)
	if !full {
		for _, r := range runs {
			sum, err := h.storedResults(ctx, *r, rr)
			if p := preparingOf(err); p != nil {
				v.CompareNote = heldOutPreparingNote(p)
				return nil
			}
			if err != nil {
				return err
			}
			if sum != nil && len(sum.Criteria) > 0 {
				samples = max(samples, sum.Criteria[0].SampleCount)
			}
		}
	}
	if cacheable && samples > h.pairLive() {
		// About a minute at 100,000 samples: computed once, detached from
		// the request, and the page shows the rest meanwhile.
		before, after := *runs[0], *runs[1]
		failed := h.pairInBackground(ctx, fmt.Sprintf("heldout\x00%+v", key), func(ctx context.Context) error {
			// Detached from the request: it reads the reviews itself.
			_, err := h.heldOutComparisonsOf(ctx, a, before, after, key, false, nil)
			return err
		})
		v.CompareNote = fmt.Sprintf("The held-out runs have finished: the paired tests over their %s samples are being computed once (a bootstrap and a permutation test for each coefficient), which can take a few minutes; the rest of the page is complete. Reload the page to see the comparison.", web.Count(samples))
		if failed {
			v.CompareNote += " The previous attempt to compute them failed (the error is in the server log); a new one starts half a minute after it."
		}
		return nil
	}
	res, err := h.heldOutComparisonsOf(ctx, a, *runs[0], *runs[1], key, full, rr)
	if p := preparingOf(err); p != nil {
		v.CompareNote = heldOutPreparingNote(p)
		return nil
	}
	if err != nil {
		return err
	}
	v.Comparisons, v.HumansNote, v.BeforeHumansNote = res.comparisons, res.humansNote, res.beforeNote
	return nil
}

// heldOutPreparingNote says that the held-out runs' results are being
// stored (p), so the comparison waits for them.
func heldOutPreparingNote(p *preparingError) string {
	return fmt.Sprintf("The held-out runs have finished: their results (%s samples) are being computed and stored, and the comparison appears here when they are. Reload the page in a few seconds.", web.Count(p.samples))
}

// heldOutResult is an alignment's held-out comparison as its page shows
// it: each measure's before/after figures, and the note saying that the
// after run's report reads other human ratings than the before run's,
// which both are measured against ("" when they read the same).
type heldOutResult struct {
	comparisons []web.AlignComparison
	humansNote  string
	// beforeNote says that the before run reads other ratings than the
	// held-out copy's column (beforeHumansNote), "" when it reads it.
	beforeNote string
}

// heldOutComparisonsOf reads the held-out runs' scores and compares them
// (heldOutComparisons). Unless full, the comparisons are cached under key
// when both runs are still as key names them after their scores were
// read: a new choice of human ratings made meanwhile changes the scores
// read, and they must not be kept under the previous choice's key.
func (h *Handlers) heldOutComparisonsOf(ctx context.Context, a models.Alignment, beforeRun, afterRun models.Run, key heldOutKey, full bool, rr *runReviews) (heldOutResult, error) {
	before, err := h.alignSamplesOf(ctx, beforeRun, 0, false, full, rr)
	if err != nil {
		return heldOutResult{}, err
	}
	after, err := h.alignSamplesOf(ctx, afterRun, 0, false, full, rr)
	if err != nil {
		return heldOutResult{}, err
	}
	rc := h.reports
	compare := heldOutComparisons
	if rc != nil && rc.compareHeldOut != nil {
		compare = rc.compareHeldOut
	}
	res := heldOutResult{comparisons: compare(a, before.scores, after.scores), humansNote: heldOutHumansNote(beforeRun, afterRun, before, after),
		beforeNote: beforeHumansNote(a.SourceRunID, beforeRun, before)}
	if full || rc == nil || beforeRun.FinishedAt == nil || afterRun.FinishedAt == nil {
		return res, nil
	}
	ws := workspaceOf(ctx)
	nowBefore, err := h.DB.FindRun(ctx, ws, beforeRun.ID)
	if err != nil {
		return heldOutResult{}, err
	}
	nowAfter, err := h.DB.FindRun(ctx, ws, afterRun.ID)
	if err != nil {
		return heldOutResult{}, err
	}
	if nowBefore.Finished() && nowAfter.Finished() && nowBefore.FinishedAt != nil && nowAfter.FinishedAt != nil &&
		finishedPairKey(nowBefore, nowAfter, true) == key.pairKey {
		rc.mu.Lock()
		putBounded(rc.heldOut, key, res)
		rc.mu.Unlock()
	}
	return res, nil
}

// heldOutHumansNote says that the held-out runs' reports hold different
// human ratings for some of the samples compared, "" when every one has
// the same in both. The comparison measures both versions against the
// before run's ratings (heldOutComparisons: a paired test needs one
// target, as the compare page measures both runs against run A's); each
// run chooses its own on its page, so the after run may read others, and
// its own figures then differ from the after column.
func heldOutHumansNote(beforeRun, afterRun models.Run, before, after alignSamples) string {
	afterByRow := make(map[int64]*float64, len(after.scores))
	for _, s := range after.scores {
		afterByRow[s.RowID] = s.Human
	}
	matched, differ := 0, 0
	for _, s := range before.scores {
		hum, ok := afterByRow[s.RowID]
		if !ok {
			continue
		}
		matched++
		if !sameRating(s.Human, hum) {
			differ++
		}
	}
	if differ == 0 {
		return ""
	}
	why := "The held-out runs' reports hold different human ratings"
	if before.rep != nil && after.rep != nil && !report.SameCriterionHumans(before.rep, 0, after.rep, 0) {
		why = fmt.Sprintf("The held-out runs read different human ratings: the before run (run %d) reads %s, the after run (run %d) reads %s",
			beforeRun.ID, before.rep.CriterionShort(0), afterRun.ID, after.rep.CriterionShort(0))
	}
	return fmt.Sprintf("%s, which differ on %s of the %s held-out samples compared. "+
		"Both versions are measured here against the before run's ratings, so that the paired tests have one target; "+
		"the after column therefore differs from the after run's own figures on its page. "+
		"To measure both on other ratings, choose the same human ratings on both runs (on each run's page, under Human ratings).",
		why, runCount(differ), runCount(matched))
}

// heldOutComparisons compares the held-out runs' agreement with the
// humans, each measure's difference after minus before.
func heldOutComparisons(a models.Alignment, before, after []models.SampleScore) []web.AlignComparison {
	// Both runs judged the same held-out dataset: pair the samples by row.
	afterByRow := make(map[int64]models.SampleScore, len(after))
	for _, s := range after {
		afterByRow[s.RowID] = s
	}
	var b, aft, hum []*float64
	for _, s := range before {
		o, ok := afterByRow[s.RowID]
		if !ok {
			continue
		}
		b, aft, hum = append(b, s.Final), append(aft, o.Final), append(hum, s.Human)
	}
	var cs []web.AlignComparison
	for _, m := range stats.Methods() {
		d := align.Compare(m, b, aft, hum, uint64(a.Seed))
		cs = append(cs, web.AlignComparison{Method: m, Difference: d.Difference})
	}
	return cs
}

// formatScore shows a final score or a human rating as the run page does
// (two decimals, rounded by web.Decimal), so a sample's figures here match
// its row there and the gap beside them (web.Signed, the same rounding).
func formatScore(x float64) string {
	return web.Minus(web.Decimal(x, 2))
}

// fieldsExcerpt shows the sample's fields on one line, cut at a word.
func fieldsExcerpt(fields []evaluator.Text) string {
	var parts []string
	for _, f := range fields {
		parts = append(parts, f.Label+": "+f.Value)
	}
	return excerpt.Line(strings.Join(parts, " · "), excerptRunes)
}

// readDraftForm reads the edited draft: the three level texts and the
// example rows (sample id, score, reason; rows with neither id nor score
// are empty and skipped).
func readDraftForm(c echo.Context) (draftForm, []string) {
	vals, err := c.FormParams()
	if err != nil {
		return draftForm{}, []string{"The form could not be read."}
	}
	f := draftForm{low: strings.TrimSpace(formText(vals, "low")), middle: strings.TrimSpace(formText(vals, "middle")), high: strings.TrimSpace(formText(vals, "high"))}
	ids, scores, reasons := vals["example_id"], vals["example_score"], vals["example_reason"]
	for i := range ids {
		row := web.AlignExampleRow{SampleID: strings.TrimSpace(ids[i])}
		if i < len(scores) {
			row.Score = strings.TrimSpace(scores[i])
		}
		if i < len(reasons) {
			row.Reason = strings.TrimSpace(strings.ReplaceAll(reasons[i], "\r\n", "\n"))
		}
		if row.SampleID == "" && row.Score == "" {
			continue
		}
		f.examples = append(f.examples, row)
	}
	return f, nil
}

// acceptAlignment checks the edited draft, stores it as a new version of
// the rubric and launches the held-out runs of the old and new versions.
func (h *Handlers) acceptAlignment(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	a, run, crit, err := h.alignmentParts(c)
	if err != nil {
		return err
	}
	f, errs := readDraftForm(c)
	// The rubric's state the page was opened on: the accept applies only
	// over it, as the rubric editor's save does.
	revision := c.FormValue("revision")
	failed := func(msgs ...string) error {
		v, err := h.alignmentView(c, a, run, crit, f, msgs)
		if err != nil {
			return err
		}
		v.Revision = revision
		return render(c, http.StatusUnprocessableEntity, web.AlignmentPage(v))
	}
	if len(errs) > 0 {
		return failed(errs...)
	}
	if a.Status != models.AlignmentDrafted {
		return failed(fmt.Sprintf("Alignment %d was already accepted as version %d: start a new alignment to change the rubric again.", a.ID, derefInt(a.NewVersion)))
	}
	draft, err := h.draftFromForm(ctx, a, run, crit, f)
	if err != nil {
		return failed(err.Error())
	}
	rubric, err := h.DB.FindRubric(ctx, ws, a.RubricID)
	if err != nil {
		return err
	}
	idx := -1
	for i, rc := range rubric.Criteria {
		if strings.EqualFold(rc.Name, crit.Name) {
			idx = i
		}
	}
	if idx < 0 {
		return failed(fmt.Sprintf("The rubric no longer has a criterion named %s: the draft cannot be applied to it.", crit.Name))
	}
	rubric.Criteria[idx] = draft.Apply(rubric.Criteria[idx])
	a.Draft = draft
	if err := h.DB.AcceptAlignment(ctx, &a, &rubric, expectRevision(revision)); err != nil {
		if models.ErrorCode(err) == models.EChanged {
			return h.rubricSavedBeforeAccept(c, a, run, crit, f)
		}
		if code := models.ErrorCode(err); code == models.EInvalid || code == models.EConflict {
			return failed(models.ErrorMessage(err))
		}
		return err
	}
	after := draft.Apply(crit)
	before, afterRun, started, err := h.launchHeldOutFor(c, a, run, after, rubric.Version)
	if err != nil {
		setFlash(c, "error", fmt.Sprintf("Version %d of the rubric is saved, but the held-out runs could not be launched: %s. Launch them again from this page.",
			rubric.Version, errorClause(err)))
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/alignments/%d", a.ID))
	}
	if started {
		return redirect(c, fmt.Sprintf("/alignments/%d", a.ID), fmt.Sprintf("Saved as version %d of %s. The held-out runs of versions %d and %d are being prepared: the %d held-out samples are being copied, and this page shows the runs once they are launched.",
			rubric.Version, rubric.Name, a.BaseVersion, rubric.Version, len(a.HeldOutRowIDs)))
	}
	return redirect(c, fmt.Sprintf("/alignments/%d", a.ID), fmt.Sprintf("Saved as version %d of %s. Runs %d (version %d) and %d (version %d) judge the %d held-out samples.",
		rubric.Version, rubric.Name, before.ID, a.BaseVersion, afterRun.ID, rubric.Version, len(a.HeldOutRowIDs)))
}

// rubricSavedBeforeAccept answers an accept refused because the rubric was
// saved after the alignment's page was opened (another tab, the editor, a
// script): the page again (409) with the person's draft kept, the aligned
// criterion as the rubric now stores it, and the rubric's new revision, so
// that accepting again applies the draft over that knowingly.
func (h *Handlers) rubricSavedBeforeAccept(c echo.Context, a models.Alignment, run models.Run, crit evaluator.Criterion, f draftForm) error {
	stored, err := h.DB.FindRubric(c.Request().Context(), h.workspaceID(c), a.RubricID)
	if err != nil {
		return err
	}
	v, err := h.alignmentView(c, a, run, crit, f, []string{"Someone saved the rubric " + stored.Name + " after you opened this page (version " +
		strconv.Itoa(stored.Version) + " now). Here is " + crit.Name + " as it stores it; your draft is kept below. Accept again to replace it with your draft."})
	if err != nil {
		return err
	}
	v.Revision = stored.Revision()
	for _, rc := range stored.Criteria {
		if strings.EqualFold(rc.Name, crit.Name) {
			v.SavedMeanwhile = &web.AlignSavedCriterion{Version: stored.Version, Low: rc.Levels.Low, Middle: rc.Levels.Middle, High: rc.Levels.High, Examples: len(rc.Examples)}
		}
	}
	return render(c, http.StatusConflict, web.AlignmentPage(v))
}

// relaunchHeldOut launches the held-out runs of an accepted alignment
// whose runs could not be launched at acceptance (or were deleted).
func (h *Handlers) relaunchHeldOut(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	a, run, crit, err := h.alignmentParts(c)
	if err != nil {
		return err
	}
	if a.Status != models.AlignmentAccepted || a.NewVersion == nil {
		return models.Errorf(models.EInvalid, "alignment %d has not been accepted yet: accept its draft first", a.ID)
	}
	if a.BeforeRunID != nil && a.AfterRunID != nil {
		_, errB := h.DB.FindRun(ctx, ws, *a.BeforeRunID)
		_, errA := h.DB.FindRun(ctx, ws, *a.AfterRunID)
		if errB == nil && errA == nil {
			return models.Errorf(models.EConflict, "alignment %d already has its held-out runs (%d and %d)", a.ID, *a.BeforeRunID, *a.AfterRunID)
		}
	}
	// The accepted version as stored, in case the draft record and the
	// version ever differ: the version is what the comparison is about.
	ver, err := h.DB.FindRubricVersion(ctx, ws, a.RubricID, *a.NewVersion)
	if err != nil {
		return err
	}
	after := a.Draft.Apply(crit)
	for _, vc := range ver.Criteria {
		if strings.EqualFold(vc.Name, crit.Name) {
			after = vc
		}
	}
	_, _, started, err := h.launchHeldOutFor(c, a, run, after, *a.NewVersion)
	if err != nil {
		if models.ErrorCode(err) != models.EConflict {
			return err
		}
		if errors.Is(err, models.ErrHeldOutPreparing) || errors.Is(err, models.ErrHeldOutLaunched) {
			// Under way (here or in another server process), or done
			// meanwhile: nothing to launch again.
			setFlash(c, "error", upperFirst(models.ErrorMessage(err))+".")
			return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/alignments/%d", a.ID))
		}
		// The workspace's limit of runs at once: said on the alignment's
		// page, where the button is, as accepting says it.
		setFlash(c, "error", fmt.Sprintf("The held-out runs could not be launched: %s. Launch them again from this page.", errorClause(err)))
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/alignments/%d", a.ID))
	}
	if started {
		return redirect(c, fmt.Sprintf("/alignments/%d", a.ID), fmt.Sprintf("The held-out runs of both versions are being prepared: the %d held-out samples are being copied, and this page shows the runs once they are launched.", len(a.HeldOutRowIDs)))
	}
	return redirect(c, fmt.Sprintf("/alignments/%d", a.ID), "Launched the held-out runs of both versions.")
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// draftFromForm turns the edited form into a draft: each example's fields
// are the calibration sample's own (the judge sees what the dataset holds,
// not a copy the person could alter); an example from the held-out part is
// refused (align.CheckExamples). Only the examples' rows are read (by
// their sample id), not the split's: align.CheckExamples looks up the
// examples' ids alone, so the parts' ids it is given are those.
func (h *Handlers) draftFromForm(ctx context.Context, a models.Alignment, run models.Run, crit evaluator.Criterion, f draftForm) (align.Draft, error) {
	d := align.Draft{Levels: evaluator.Levels{Low: f.low, Middle: f.middle, High: f.high}, Notes: a.Draft.Notes}
	for i, ex := range f.examples {
		// A decimal comma ("2,5") is read as the other forms read it.
		score, problem := typedDecimal(ex.Score, "2.5")
		if problem != "" {
			return d, fmt.Errorf("example %d: score %s %s", i+1, web.Quoted(ex.Score), problem)
		}
		d.Examples = append(d.Examples, evaluator.Example{SampleID: ex.SampleID, Score: score, Reason: ex.Reason})
	}
	calRows, heldRows := idSet(a.CalibrationRowIDs), idSet(a.HeldOutRowIDs)
	cal, held := map[string]bool{}, map[string]bool{}
	fields := run.RubricSnapshot.Fields
	// Too many examples are refused before any is looked up (CheckExamples
	// checks the count first): a posted form bounds no lookups otherwise.
	if len(d.Examples) <= evaluator.MaxExamples {
		for i := range d.Examples {
			e := &d.Examples[i]
			row, found, err := h.DB.FindDatasetRowByExternalID(ctx, run.DatasetID, e.SampleID)
			if err != nil {
				return d, err
			}
			if !found || (!calRows[row.ID] && !heldRows[row.ID]) {
				continue // not a sample of the split: CheckExamples says so
			}
			if heldRows[row.ID] {
				held[row.ExternalID] = true
			} else {
				cal[row.ExternalID] = true
			}
			e.Fields = row.Sample(fields).Fields
		}
	}
	if err := align.CheckExamples(onRubricScale(crit), d.Examples, cal, held); err != nil {
		return d, errors.New(upperFirst(err.Error()) + ".")
	}
	return d, nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ---- rubric versions ----

// keepExamples gives each edited criterion the labelled examples of the
// stored criterion it was: the rubric editor's form does not carry
// examples, and saving it must not silently drop them. was[i] is the
// stored name edited[i] was loaded with (the form's hidden "stored" input;
// "" for a criterion added in the editor), so a renamed criterion keeps
// its examples; a row without one (or whose stored name is gone) takes
// those of the stored criterion of its own name, unless another row
// claimed it. Each stored criterion's examples go to one row at most.
// When the edit changed the criterion's range, each example's score is
// moved onto the new range keeping its place on the scale (the top stays
// the top, the middle the middle), as the prompts of a method with a
// scale of its own show them; left as they were, the judge would read a 5
// on a 0-1 scale. moved says, a sentence each, whose examples were
// rescaled, and dropped which removed criteria took examples with them,
// for the page to say so.
func keepExamples(stored, edited []evaluator.Criterion, was []string) (out []evaluator.Criterion, moved, dropped []string) {
	source := make([]int, len(edited)) // index into stored, -1 for none
	claimed := make([]bool, len(stored))
	find := func(name string) int {
		for j, s := range stored {
			if !claimed[j] && strings.EqualFold(strings.TrimSpace(s.Name), strings.TrimSpace(name)) {
				return j
			}
		}
		return -1
	}
	for i := range edited {
		source[i] = -1
		if i < len(was) && strings.TrimSpace(was[i]) != "" {
			if j := find(was[i]); j >= 0 {
				source[i], claimed[j] = j, true
			}
		}
	}
	for i, e := range edited {
		if source[i] < 0 {
			if j := find(e.Name); j >= 0 {
				source[i], claimed[j] = j, true
			}
		}
	}
	for i, e := range edited {
		if source[i] < 0 || len(e.Examples) > 0 || len(stored[source[i]].Examples) == 0 {
			continue
		}
		s := stored[source[i]]
		examples := slices.Clone(s.Examples)
		if (s.Lo != e.Lo || s.Hi != e.Hi) && s.Hi > s.Lo && e.Hi > e.Lo {
			for k := range examples {
				examples[k].Score = rescale(examples[k].Score, s.Lo, s.Hi, e.Lo, e.Hi)
			}
			moved = append(moved, fmt.Sprintf("%s's labelled examples were moved from %s to %s, each keeping its place on the scale.",
				e.Name, rangeText(s.Lo, s.Hi), rangeText(e.Lo, e.Hi)))
		}
		edited[i].Examples = examples
	}
	for j, s := range stored {
		if !claimed[j] && len(s.Examples) > 0 {
			dropped = append(dropped, fmt.Sprintf("%s's %d labelled %s removed with it.", s.Name, len(s.Examples), plural(len(s.Examples), "example was", "examples were")))
		}
	}
	return edited, moved, dropped
}

// rangeText writes a range as people do, "1–5"; with a negative end the
// dash would read as a minus sign, so "[-2, 2]".
func rangeText(lo, hi float64) string {
	if lo < 0 || hi < 0 {
		return fmt.Sprintf("[%g, %g]", lo, hi)
	}
	return fmt.Sprintf("%g–%g", lo, hi)
}

// rescale maps score from [lo, hi] onto [newLo, newHi], rounded to four
// decimals (a human's score has no more; the rounding drops float noise
// such as 0.30000000000000004) and kept inside the new range.
func rescale(score, lo, hi, newLo, newHi float64) float64 {
	v := newLo + (score-lo)/(hi-lo)*(newHi-newLo)
	v = math.Round(v*1e4) / 1e4
	return min(max(v, newLo), newHi)
}

func (h *Handlers) showRubricVersions(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	r, err := h.DB.FindRubric(ctx, ws, id)
	if err != nil {
		return err
	}
	vs, err := h.DB.ListRubricVersions(ctx, ws, id)
	if err != nil {
		return err
	}
	runs, err := h.DB.ListRubricRuns(ctx, ws, id)
	if err != nil {
		return err
	}
	as, err := h.DB.ListRubricAlignments(ctx, ws, id)
	if err != nil {
		return err
	}
	v := web.RubricVersionsView{Page: page(c, "Versions of "+r.Name), RubricID: r.ID, Name: r.Name, Current: r.Version}
	for _, ver := range vs {
		row := web.RubricVersionRow{Version: ver.Version, Note: ver.Note, Created: ver.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")}
		for _, cr := range ver.Criteria {
			row.Examples += len(cr.Examples)
		}
		v.Versions = append(v.Versions, row)
	}
	for _, run := range runs {
		row := web.RubricRunRow{ID: run.ID, Name: run.Name, Status: run.Status, Method: run.Method}
		if run.RubricVersion != nil {
			row.Version = *run.RubricVersion
		}
		v.Runs = append(v.Runs, row)
	}
	for _, a := range as {
		l := alignmentLink(a, nil)
		if src, err := h.DB.FindRun(ctx, ws, a.SourceRunID); err == nil {
			l = alignmentLink(a, src.RubricSnapshot.Criteria)
		}
		v.Alignments = append(v.Alignments, l)
	}
	return render(c, http.StatusOK, web.RubricVersionsPage(v))
}

func (h *Handlers) showRubricVersion(c echo.Context) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("version"))
	if err != nil || n < 1 {
		// The path's text as the address bar shows it (Echo gives the
		// segment still escaped: "%20" for a space).
		typed, uerr := url.PathUnescape(c.Param("version"))
		if uerr != nil {
			typed = c.Param("version")
		}
		return models.Errorf(models.ENotFound, "%s is not a version number", web.Quoted(typed))
	}
	r, err := h.DB.FindRubric(ctx, ws, id)
	if err != nil {
		return err
	}
	ver, err := h.DB.FindRubricVersion(ctx, ws, id, n)
	if err != nil {
		return err
	}
	v := web.RubricVersionView{Page: page(c, fmt.Sprintf("%s, version %d", r.Name, n)), RubricID: r.ID, Name: r.Name, Version: n,
		Current: r.Version == n, Note: ver.Note, Created: ver.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), Task: ver.Task, Criteria: ver.Criteria}
	return render(c, http.StatusOK, web.RubricVersionPage(v))
}
