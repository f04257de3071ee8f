package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/perturb"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// This file holds the variants of a finished run: the same setup with
// another seed (repeatability), on a noisy copy of the data and with a
// reworded rubric (robustness), as the BatchEval paper measures them.

// maxNoisePercent bounds each noise rate. Why 50: past half the words
// deleted or swapped, the copy is no longer the same sample, and the
// paper's experiment uses 5.
const maxNoisePercent = 50

// variantForms is what the three forms hold as typed, with their messages.
type variantForms struct {
	seed, deletePct, replacePct, noiseSeed string
	task                                   string
	criteria                               []evaluator.Criterion
	reseedErrs, noiseErrs, rewordErrs      []string
}

// defaultVariantForms fills the forms from the run: the next seed, the
// paper's noise rates, and the run's own rubric wording.
func defaultVariantForms(run models.Run) variantForms {
	opt := perturb.PaperOptions()
	return variantForms{
		seed:       strconv.FormatInt(run.Settings.Seed+1, 10),
		deletePct:  formatNumber(math.Round(opt.DeleteRate * 100)),
		replacePct: formatNumber(math.Round(opt.ReplaceRate * 100)),
		noiseSeed:  strconv.FormatInt(run.Settings.Seed, 10),
		task:       run.RubricSnapshot.Task,
		criteria:   run.RubricSnapshot.Criteria,
	}
}

// variantsView builds the page from the run and the forms.
func (h *Handlers) variantsView(c echo.Context, run models.Run, f variantForms) web.RunVariantsView {
	ctx := c.Request().Context()
	v := web.RunVariantsView{Page: page(c, "Variants of "+run.Name), RunID: run.ID, RunName: run.Name,
		Method: methods.Label(run.Method), Status: run.Status, Finished: run.Finished(), Seed: run.Settings.Seed,
		Dataset: "(deleted dataset)", NewSeed: f.seed, DeletePercent: f.deletePct, ReplacePercent: f.replacePct, NoiseSeed: f.noiseSeed,
		LexiconWords: len(perturb.DefaultLexicon()), Task: f.task,
		ReseedErrors: f.reseedErrs, NoiseErrors: f.noiseErrs, RewordErrors: f.rewordErrs,
		ProjectCrumb: h.projectCrumb(ctx, h.workspaceID(c), run.ProjectID)}
	if d, err := h.DB.FindDataset(ctx, h.workspaceID(c), run.DatasetID); err == nil {
		v.Dataset = d.Name
	}
	for i, cr := range f.criteria {
		vc := web.VariantCriterion{Index: i, Name: cr.Name, Range: scaleText(cr), HumanColumn: cr.HumanColumn,
			Description: cr.Description, Low: cr.Levels.Low, Middle: cr.Levels.Middle, High: cr.Levels.High}
		if models.MeansAnnotators(cr) {
			// Named as the run's pages name it ("mean of a, b"), not left
			// out as if the criterion had no human ratings.
			vc.HumanColumn = models.AnnotatorMeanKey(cr.AnnotatorColumns)
		}
		v.Criteria = append(v.Criteria, vc)
	}
	if derived, err := h.DB.ListDerivedRuns(ctx, h.workspaceID(c), run.ID); err == nil {
		for _, d := range derived {
			v.Derived = append(v.Derived, web.VariantRunLink{ID: d.ID, Name: d.Name, Variant: variantLabel(d.Variant), Status: d.Status})
		}
	}
	return v
}

func (h *Handlers) showRunVariants(c echo.Context) error {
	run, err := h.findRun(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunVariantsPage(h.variantsView(c, run, defaultVariantForms(run))))
}

// readVariantForm loads the run named by :id and the posted form; a run
// still queued or running has nothing to compare a variant with yet.
func (h *Handlers) readVariantForm(c echo.Context) (models.Run, url.Values, variantForms, string, error) {
	run, err := h.findRun(c)
	if err != nil {
		return run, nil, variantForms{}, "", err
	}
	vals, err := c.FormParams()
	if err != nil {
		return run, nil, variantForms{}, "", models.Errorf(models.EInvalid, "unreadable form: %v", err)
	}
	notReady := ""
	if !run.Finished() {
		notReady = fmt.Sprintf("Run %d is still %s: launch its variants once it has finished, so that there is something to compare them with.", run.ID, run.Status)
	}
	return run, vals, defaultVariantForms(run), notReady, nil
}

// variantFailed re-renders the page with the form's messages, or returns
// err when it is not the person's to fix.
func (h *Handlers) variantFailed(c echo.Context, run models.Run, f variantForms, err error) error {
	status := http.StatusUnprocessableEntity
	switch code := models.ErrorCode(err); {
	case err == nil || code == models.EInvalid:
	case code == models.EConflict:
		// The workspace's limit of runs at once: the form, with what to
		// do, rather than a bare error page.
		status = http.StatusConflict
	default:
		return err
	}
	return render(c, status, web.RunVariantsPage(h.variantsView(c, run, f)))
}

// reseedRun launches the run's setup again with another seed.
func (h *Handlers) reseedRun(c echo.Context) error {
	run, vals, f, notReady, err := h.readVariantForm(c)
	if err != nil {
		return err
	}
	f.seed = strings.TrimSpace(vals.Get("seed"))
	seed, perr := strconv.ParseInt(f.seed, 10, 64)
	switch {
	case notReady != "":
		f.reseedErrs = append(f.reseedErrs, notReady)
	case perr != nil:
		f.reseedErrs = append(f.reseedErrs, fmt.Sprintf("Seed: %s is not a whole number.", web.Quoted(f.seed)))
	case seed == run.Settings.Seed:
		// Checked here, before the runner creates an experiment around
		// the run: an invalid form must leave nothing behind.
		f.reseedErrs = append(f.reseedErrs, fmt.Sprintf("Seed: choose a seed other than the run's own (%d); the same seed would repeat the same run.", run.Settings.Seed))
	}
	if len(f.reseedErrs) > 0 {
		return h.variantFailed(c, run, f, nil)
	}
	child, err := h.Runner.LaunchReseed(c.Request().Context(), h.workspaceID(c), run.ID, seed)
	if err != nil {
		f.reseedErrs = append(f.reseedErrs, models.ErrorMessage(err))
		return h.variantFailed(c, run, f, err)
	}
	h.audit(c, models.AuditRunLaunched, runTarget(child), fmt.Sprintf("re-run of run %d with seed %d", run.ID, seed))
	return redirect(c, runURL(child.ID), fmt.Sprintf("Launched run %d's setup again with seed %d.", run.ID, seed))
}

// noiseRun copies the run's data with words deleted and replaced, and
// launches the same setup on the copy.
func (h *Handlers) noiseRun(c echo.Context) error {
	run, vals, f, notReady, err := h.readVariantForm(c)
	if err != nil {
		return err
	}
	f.deletePct, f.replacePct, f.noiseSeed = strings.TrimSpace(vals.Get("delete_percent")), strings.TrimSpace(vals.Get("replace_percent")), strings.TrimSpace(vals.Get("seed"))
	if notReady != "" {
		f.noiseErrs = append(f.noiseErrs, notReady)
	}
	// A decimal comma ("2,5") is read as the other forms read it.
	percent := func(label, s string) float64 {
		p, problem := typedDecimal(s, "2.5")
		switch {
		case problem != "":
			f.noiseErrs = append(f.noiseErrs, fmt.Sprintf("%s: %s %s; use a percentage from 0 to %d.", label, web.Quoted(s), problem, maxNoisePercent))
			return 0
		case p < 0 || p > maxNoisePercent:
			f.noiseErrs = append(f.noiseErrs, fmt.Sprintf("%s: %g is out of range; use a percentage from 0 to %d.", label, p, maxNoisePercent))
			return 0
		}
		return p
	}
	del, rep := percent("Words deleted", f.deletePct), percent("Words replaced", f.replacePct)
	seed, perr := strconv.ParseInt(f.noiseSeed, 10, 64)
	if perr != nil {
		f.noiseErrs = append(f.noiseErrs, fmt.Sprintf("Seed: %s is not a whole number.", web.Quoted(f.noiseSeed)))
	}
	if len(f.noiseErrs) == 0 && del == 0 && rep == 0 {
		f.noiseErrs = append(f.noiseErrs, "Delete or replace some words: with both at 0% the copy would equal the data.")
	}
	if len(f.noiseErrs) > 0 {
		return h.variantFailed(c, run, f, nil)
	}
	ctx := c.Request().Context()
	child, st, err := h.Runner.LaunchNoise(ctx, h.workspaceID(c), run.ID, seed, perturb.Options{DeleteRate: del / 100, ReplaceRate: rep / 100})
	if err != nil {
		f.noiseErrs = append(f.noiseErrs, models.ErrorMessage(err))
		return h.variantFailed(c, run, f, err)
	}
	h.audit(c, models.AuditRunLaunched, runTarget(child), fmt.Sprintf("noisy copy of run %d", run.ID))
	return redirect(c, runURL(child.ID), noiseSummary(st, child, run, h.noisyDatasetName(ctx, child.DatasetID)))
}

// noisyDatasetName names the copy for the flash message.
func (h *Handlers) noisyDatasetName(ctx context.Context, id int64) string {
	if d, err := h.DB.FindDataset(ctx, workspaceOf(ctx), id); err == nil {
		return d.Name
	}
	return "a noisy copy"
}

// noiseSummary says what the perturbation did, in words.
func noiseSummary(st perturb.Stats, child, parent models.Run, dataset string) string {
	share := func(n int) string {
		if st.Words == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(st.Words))
	}
	return fmt.Sprintf("Made %s: of %d words the judge sees, %d were deleted (%s) and %d replaced by a synonym (%s); words the lexicon does not know were left as they were. Run %d's setup is launched on it.",
		dataset, st.Words, st.Deleted, share(st.Deleted), st.Replaced, share(st.Replaced), parent.ID)
}

// rewordRun launches the run's setup with the rubric's texts as reworded
// on the form; names, ranges and human columns stay the run's.
func (h *Handlers) rewordRun(c echo.Context) error {
	run, vals, f, notReady, err := h.readVariantForm(c)
	if err != nil {
		return err
	}
	old := run.RubricSnapshot
	rub := evaluator.Rubric{Task: strings.TrimSpace(formText(vals, "task")), Fields: old.Fields}
	changed := rub.Task != strings.TrimSpace(old.Task)
	for i, o := range old.Criteria {
		key := func(part string) string { return fmt.Sprintf("%s_%d", part, i) }
		cr := o
		cr.Description = strings.TrimSpace(formText(vals, key("description")))
		cr.Levels = evaluator.Levels{Low: strings.TrimSpace(formText(vals, key("low"))), Middle: strings.TrimSpace(formText(vals, key("middle"))), High: strings.TrimSpace(formText(vals, key("high")))}
		if cr.Description != strings.TrimSpace(o.Description) || cr.Levels.Low != strings.TrimSpace(o.Levels.Low) ||
			cr.Levels.Middle != strings.TrimSpace(o.Levels.Middle) || cr.Levels.High != strings.TrimSpace(o.Levels.High) {
			changed = true
		}
		rub.Criteria = append(rub.Criteria, cr)
	}
	f.task, f.criteria = rub.Task, rub.Criteria
	switch {
	case notReady != "":
		f.rewordErrs = append(f.rewordErrs, notReady)
	case rub.Validate() != nil:
		// Checked here, before the runner creates an experiment around the
		// run: an invalid form must leave nothing behind.
		f.rewordErrs = append(f.rewordErrs, "Rubric: "+rub.Validate().Error()+".")
	case !changed:
		f.rewordErrs = append(f.rewordErrs, "Nothing was reworded: change the task or a criterion's wording first.")
	}
	if len(f.rewordErrs) > 0 {
		return h.variantFailed(c, run, f, nil)
	}
	child, err := h.Runner.LaunchReworded(c.Request().Context(), h.workspaceID(c), run.ID, rub)
	if err != nil {
		f.rewordErrs = append(f.rewordErrs, models.ErrorMessage(err))
		return h.variantFailed(c, run, f, err)
	}
	h.audit(c, models.AuditRunLaunched, runTarget(child), fmt.Sprintf("run %d with a reworded rubric", run.ID))
	return redirect(c, runURL(child.ID), fmt.Sprintf("Launched run %d's setup with the reworded rubric.", run.ID))
}

// formText reads a textarea, with the browser's CRLF line ends made LF.
func formText(vals url.Values, key string) string {
	return strings.ReplaceAll(vals.Get(key), "\r\n", "\n")
}

// variantLabel names a stored variant kind for people.
func variantLabel(variant string) string {
	switch variant {
	case runner.VariantReseed:
		return "another seed"
	case runner.VariantNoise:
		return "noisy data"
	case runner.VariantReworded:
		return "reworded rubric"
	}
	return variant
}
