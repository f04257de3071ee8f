package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/rubrictemplates"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// newCriterion is the blank criterion the editor adds. A 1-5 range is
// pre-filled because it is the scale most people reach for first.
func newCriterion() web.CriterionForm { return web.CriterionForm{Lo: "1", Hi: "5"} }

// maxCriteria bounds the criteria one form may carry: far more than any
// rubric needs, few enough that a crafted request stays cheap.
const maxCriteria = 50

// rubricForm is the editor's content as posted.
type rubricForm struct {
	Name             string
	Task             string
	Criteria         []web.CriterionForm
	PreviewDataset   int64
	PreviewCriterion int
	// notice and importError are shown above the editor and next to the
	// import box.
	notice, importError string
	// importProblems are every problem of a rubric file that could not be
	// imported, each with its line, listed under importError.
	importProblems []string
	// fieldErrors are the save's problems by field id, all of them.
	fieldErrors map[string][]string
	// revision is the stored state the editor was opened on (a hidden
	// field; empty for a new rubric, or a post without it): a save applies
	// only over that state, so it cannot overwrite a save made since.
	revision string
	// savedMeanwhile is the stored rubric when it changed since.
	savedMeanwhile *web.RubricSaved
}

// newRubric shows an empty editor for a project, or one filled from a
// template (?template=key).
func (h *Handlers) newRubric(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	f := rubricForm{Criteria: []web.CriterionForm{newCriterion()}}
	if key := c.QueryParam("template"); key != "" {
		tpl, rub, err := rubrictemplates.Rubric(key)
		if err != nil {
			return models.Errorf(models.ENotFound, "%v", err)
		}
		f = formOfRubric(tpl.Name, rub)
		f.notice = "Started from the " + tpl.Name + " template. Adapt the wording to your data, choose the human rating columns, and save."
	}
	datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), p.ID)
	if err != nil {
		return err
	}
	if said := preselectOnlyRatingColumn(&f, ratingColumnsOf(datasets)); said != "" {
		f.notice = strings.TrimSpace(f.notice + " " + said)
	}
	return h.renderRubricEditor(c, http.StatusOK, p, models.Rubric{ProjectID: p.ID}, f, "", true)
}

// preselectOnlyRatingColumn chooses the project's only rating column as
// the human rating column of every criterion of a new rubric that has
// none (nor annotator columns): with one column there is nothing to
// choose between, and left on None the rubric's runs could not measure
// agreement with the ratings. It returns what the page says about it, ""
// when nothing was chosen (no rating column, or several).
func preselectOnlyRatingColumn(f *rubricForm, columns []string) string {
	if len(columns) != 1 {
		return ""
	}
	col := columns[0]
	var named []string
	for i := range f.Criteria {
		cf := &f.Criteria[i]
		if cf.HumanColumn == "" && len(cf.Annotators) == 0 {
			cf.HumanColumn = col
			named = append(named, cf.Name)
		}
	}
	if len(named) == 0 {
		return ""
	}
	which := "the criterion"
	if len(named) > 1 || named[0] != "" {
		which = joinQuoted(named)
	}
	return fmt.Sprintf("Human rating column: %s is the only rating column of this project's datasets, so it is chosen for %s; "+
		"change it (or choose None) where a criterion is not what that column rates.", web.Quoted(col), which)
}

// ratingColumnsOf is the rating columns of datasets, sorted, each once.
func ratingColumnsOf(datasets []models.Dataset) []string {
	var cols []string
	for _, d := range datasets {
		cols = append(cols, d.RatingColumns...)
	}
	slices.Sort(cols)
	return slices.Compact(cols)
}

// formOfRubric fills the editor with a rubric.
func formOfRubric(name string, r evaluator.Rubric) rubricForm {
	f := rubricForm{Name: name, Task: r.Task}
	for _, cr := range r.Criteria {
		f.Criteria = append(f.Criteria, web.CriterionForm{
			Name: cr.Name, Description: cr.Description,
			Lo: strconv.FormatFloat(cr.Lo, 'g', -1, 64), Hi: strconv.FormatFloat(cr.Hi, 'g', -1, 64),
			Low: cr.Levels.Low, Middle: cr.Levels.Middle, High: cr.Levels.High, HumanColumn: cr.HumanColumn,
			Annotators: cr.AnnotatorColumns, Stored: cr.Name,
		})
	}
	return f
}

// importRubric stores a rubric file (the command line's format) as a new
// rubric of the project and opens it in the editor. A file that cannot be
// read is shown back on the new-rubric page with what is wrong in it.
func (h *Handlers) importRubric(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	fail := func(msg string) error {
		f := rubricForm{Criteria: []web.CriterionForm{newCriterion()}, importError: msg}
		return h.renderRubricEditor(c, http.StatusUnprocessableEntity, p, models.Rubric{ProjectID: p.ID}, f, "", false)
	}
	fh, err := c.FormFile("rubric_file")
	if err != nil {
		return fail("Choose a rubric file (YAML or JSON) to import.")
	}
	if fh.Size > evaluator.MaxRubricFileBytes {
		return fail(fmt.Sprintf("%s is larger than %d KiB: a rubric file is a few kilobytes.", fh.Filename, evaluator.MaxRubricFileBytes>>10))
	}
	file, err := fh.Open()
	if err != nil {
		return err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, evaluator.MaxRubricFileBytes+1))
	if err != nil {
		return err
	}
	// Every problem at once, each with its line: the rubric's own and what
	// saving it would refuse (lengths, the number of criteria).
	rub, err := evaluator.ParseRubricFileWith(b, rubricFileLimitProblems)
	var all *evaluator.RubricFileError
	if errors.As(err, &all) {
		f := rubricForm{Criteria: []web.CriterionForm{newCriterion()},
			importError:    fmt.Sprintf("%s: %d problems, nothing imported. Fix them in the file and import it again:", fh.Filename, len(all.Problems)),
			importProblems: all.Problems}
		return h.renderRubricEditor(c, http.StatusUnprocessableEntity, p, models.Rubric{ProjectID: p.ID}, f, "", false)
	}
	if err != nil {
		return fail(fh.Filename + ": " + err.Error())
	}
	// Named after the file, shortened to the limit (nobody typed it).
	name := models.ShortenName(models.OneLine(strings.TrimSpace(strings.TrimSuffix(filepath.Base(fh.Filename), filepath.Ext(fh.Filename)))), models.MaxNameFor(models.KindRubric))
	if name == "" {
		name = "Imported rubric"
	}
	r := models.Rubric{WorkspaceID: h.workspaceID(c), ProjectID: p.ID, Name: name, Task: rub.Task, Fields: rub.Fields, Criteria: rub.Criteria}
	if err := h.DB.SaveRubric(c.Request().Context(), &r); err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		return fail(fh.Filename + ": " + models.ErrorMessage(err))
	}
	msg := fmt.Sprintf("Rubric %s imported from %s with %d criteria. Check the human rating columns before launching.", web.Quoted(r.Name), web.Quoted(fh.Filename), len(r.Criteria))
	// A file made for another project may name rating columns this one's
	// datasets lack: imported as written (the editor marks them, and warns
	// when saving them), and said here, each by its criterion.
	datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), p.ID)
	if err != nil {
		return err
	}
	for _, p := range unknownRatingColumns(columnsOf(r.Criteria), datasets, editorColumnWords) {
		msg += " " + p.Message
	}
	return redirect(c, web.RubricEditURL(r.ID), msg)
}

// rubricFileLimitProblems are what saving an imported rubric would refuse
// beyond the rubric's own checks, each at its place in the file, so that
// the import names their lines (the save's message could not): more
// criteria than the editor carries, and texts longer than a store keeps
// (the limits of models.validateRubricLengths).
func rubricFileLimitProblems(r evaluator.Rubric) []*evaluator.RubricProblem {
	var out []*evaluator.RubricProblem
	if n := len(r.Criteria); n > maxCriteria {
		out = append(out, &evaluator.RubricProblem{Path: fmt.Sprintf("$.criteria[%d]", maxCriteria),
			Msg: fmt.Sprintf("the file has %d criteria; a rubric has at most %d: remove criterion %d and those after it, or split the rubric in two", n, maxCriteria, maxCriteria+1)})
	}
	long := func(path, what, value string, limit int) {
		if n := utf8.RuneCountInString(value); n > limit {
			out = append(out, &evaluator.RubricProblem{Path: path, Msg: fmt.Sprintf("%s is %d characters long; the limit is %d: shorten it", what, n, limit)})
		}
	}
	long("$.task", "the task", r.Task, models.MaxRubricTextLength)
	for i, f := range r.Fields {
		long(fmt.Sprintf("$.fields[%d].label", i), fmt.Sprintf("field %d: the label", i+1), f.Label, models.MaxNameLength)
	}
	for i, c := range r.Criteria {
		at, in := fmt.Sprintf("$.criteria[%d]", i), fmt.Sprintf("criterion %d", i+1)
		if n := strings.TrimSpace(c.Name); n != "" && utf8.RuneCountInString(n) <= models.MaxNameLength {
			in += " (" + web.Quoted(n) + ")"
		}
		long(at+".name", in+": the name", c.Name, models.MaxNameLength)
		long(at+".description", in+": the description", c.Description, models.MaxDescriptionLength)
		long(at+".levels.low", in+": the low level description", c.Levels.Low, models.MaxDescriptionLength)
		long(at+".levels.middle", in+": the middle level description", c.Levels.Middle, models.MaxDescriptionLength)
		long(at+".levels.high", in+": the high level description", c.Levels.High, models.MaxDescriptionLength)
		for j, ex := range c.Examples {
			eat, ein := fmt.Sprintf("%s.examples[%d]", at, j), fmt.Sprintf("%s, example %d", in, j+1)
			long(eat+".reason", ein+": the reason", ex.Reason, models.MaxDescriptionLength)
			for k, f := range ex.Fields {
				long(fmt.Sprintf("%s.fields[%d].label", eat, k), fmt.Sprintf("%s: the label of field %d", ein, k+1), f.Label, models.MaxNameLength)
				long(fmt.Sprintf("%s.fields[%d].value", eat, k), fmt.Sprintf("%s: the text of field %d", ein, k+1), f.Value, models.MaxRubricTextLength)
			}
		}
	}
	return out
}

// exportRubric downloads a rubric as a rubric file, the format the command
// line (batcheval run --rubric) and "Import a rubric file" read.
func (h *Handlers) exportRubric(c echo.Context) error {
	r, _, err := h.findRubric(c)
	if err != nil {
		return err
	}
	b, err := evaluator.MarshalRubricFile(r.Evaluator())
	if err != nil {
		return err
	}
	head := "# Rubric " + strconv.Quote(r.Name) + " exported from BatchEval.\n"
	if len(r.Fields) == 0 {
		head += "# It shows the judge the dataset's own fields; to use it with `batcheval run`, add\n" +
			"# fields: [{column: ..., label: ...}] naming the data columns the judge sees.\n"
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", rubricFileName(r.Name)))
	return c.Blob(http.StatusOK, "application/yaml; charset=utf-8", append([]byte(head), b...))
}

// rubricFileName turns a rubric's name into a safe file name.
func rubricFileName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "rubric"
	}
	return base + ".yaml"
}

// editRubric shows the editor for a stored rubric.
func (h *Handlers) editRubric(c echo.Context) error {
	r, p, err := h.findRubric(c)
	if err != nil {
		return err
	}
	f := formOfRubric(r.Name, r.Evaluator())
	f.revision = r.Revision()
	// The preview's dataset and criterion, as a viewer's Preview button
	// (a GET of this page) chooses them.
	f.PreviewDataset, _ = strconv.ParseInt(c.QueryParam("preview_dataset"), 10, 64)
	f.PreviewCriterion, _ = strconv.Atoi(c.QueryParam("preview_criterion"))
	if f.PreviewCriterion < 0 || f.PreviewCriterion >= len(f.Criteria) {
		f.PreviewCriterion = 0
	}
	return h.renderRubricEditor(c, http.StatusOK, p, r, f, "", true)
}

// postNewRubric handles the editor's buttons for a new rubric.
func (h *Handlers) postNewRubric(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	return h.handleRubricForm(c, p, models.Rubric{WorkspaceID: h.workspaceID(c), ProjectID: p.ID})
}

// postRubric handles the editor's buttons for a stored rubric.
func (h *Handlers) postRubric(c echo.Context) error {
	r, p, err := h.findRubric(c)
	if err != nil {
		return err
	}
	return h.handleRubricForm(c, p, r)
}

// handleRubricForm does what the pressed button asks: add or remove a
// criterion or preview (each shows the form again, unsaved), or save.
func (h *Handlers) handleRubricForm(c echo.Context, p models.Project, r models.Rubric) error {
	params, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "the form could not be read: %v", err)
	}
	f := parseRubricForm(params)
	action := params.Get("action")
	switch {
	case action == "add-criterion":
		if len(f.Criteria) < maxCriteria {
			f.Criteria = append(f.Criteria, newCriterion())
		}
		return h.renderRubricEditor(c, http.StatusOK, p, r, f, "", false)
	case strings.HasPrefix(action, "remove-criterion-"):
		i, err := strconv.Atoi(strings.TrimPrefix(action, "remove-criterion-"))
		if err == nil && i >= 0 && i < len(f.Criteria) {
			f.Criteria = slices.Delete(f.Criteria, i, i+1)
		}
		if f.PreviewCriterion >= len(f.Criteria) {
			f.PreviewCriterion = 0
		}
		return h.renderRubricEditor(c, http.StatusOK, p, r, f, "", false)
	case action == "preview":
		return h.renderRubricEditor(c, http.StatusOK, p, r, f, "", true)
	}
	problems := f.problems()
	datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), p.ID)
	if err != nil {
		return err
	}
	var keptColumns []string // warned about once saved
	for _, rp := range unknownRatingColumns(f.columnsOver(r.Criteria), datasets, editorColumnWords) {
		if rp.Kept {
			keptColumns = append(keptColumns, rp.Message)
			continue
		}
		if problems == nil {
			problems = map[string][]string{}
		}
		id := criterionInputID(rp.Criterion, rp.Field)
		problems[id] = append(problems[id], rp.Message)
	}
	if len(problems) > 0 {
		f.fieldErrors = problems
		n := 0
		for _, m := range problems {
			n += len(m)
		}
		return h.renderRubricEditor(c, http.StatusUnprocessableEntity, p, r, f, fmt.Sprintf("Not saved: %d %s to fix, shown next to %s.", n, launchPlural(n, "problem", "problems"), launchPlural(n, "its field", "their fields")), false)
	}
	criteria, err := f.criteria()
	var moved, dropped []string
	if err == nil {
		criteria, moved, dropped = keepExamples(r.Criteria, criteria, storedNames(f.Criteria)) // the form does not carry them (align.go)
		r.Name, r.Task, r.Criteria = strings.TrimSpace(f.Name), strings.TrimSpace(f.Task), criteria
		if r.Fields == nil {
			// A new rubric uses its datasets' fields. The column is JSON
			// and NOT NULL, so "none" is stored as [], not null.
			r.Fields = []evaluator.Field{}
		}
		err = h.DB.SaveRubricIf(c.Request().Context(), &r, expectRevision(f.revision))
	}
	if models.ErrorCode(err) == models.EChanged {
		return h.rubricSavedMeanwhile(c, p, r.ID, f)
	}
	if err != nil {
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		return h.renderRubricEditor(c, http.StatusUnprocessableEntity, p, r, f, "Not saved: "+models.ErrorMessage(err), false)
	}
	msg := fmt.Sprintf("Rubric %s saved.", web.Quoted(r.Name))
	for _, sentence := range append(moved, dropped...) {
		msg += " " + sentence
	}
	unrated, ratings, err := h.criteriaWithoutRatings(c, p, r.Criteria)
	if err != nil {
		return err
	}
	var warning string
	if len(unrated) > 0 {
		// Saved all the same (a criterion may have no human ratings on
		// purpose), but said as a warning: its runs will show no
		// agreement, which is what most people came to measure.
		warning += fmt.Sprintf(" %s %s no human rating column, so runs cannot compare %s scores with your ratings. Your datasets have %s: choose one under \"Human rating column\" and save again.",
			joinQuoted(unrated), launchPlural(len(unrated), "has", "have"), launchPlural(len(unrated), "its", "their"), joinQuoted(ratings))
	}
	// Columns kept as they were (the next upload may have them again),
	// though runs find no ratings there meanwhile: a warning too.
	for _, m := range keptColumns {
		warning += " " + m
	}
	if warning != "" {
		setFlash(c, "warning", msg+warning)
		return redirect(c, projectPath(p.ID)+"#rubrics", "")
	}
	return redirect(c, projectPath(p.ID)+"#rubrics", msg)
}

// rubricSavedMeanwhile answers a save refused because someone saved the
// rubric after the editor was opened: the editor again with the person's
// changes kept, what the other save stored, and that state's revision, so
// that saving again overwrites it knowingly.
func (h *Handlers) rubricSavedMeanwhile(c echo.Context, p models.Project, id int64, f rubricForm) error {
	stored, err := h.DB.FindRubric(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		return err
	}
	f.revision = stored.Revision()
	saved := formOfRubric(stored.Name, stored.Evaluator())
	f.savedMeanwhile = &web.RubricSaved{Name: saved.Name, Task: saved.Task, Version: stored.Version, Criteria: saved.Criteria}
	return h.renderRubricEditor(c, http.StatusConflict, p, stored, f,
		"Not saved: someone saved this rubric after you opened it. Here is what they saved; your changes are kept below. Save again to overwrite their version with yours.", false)
}

// previewRubric renders the prompt preview fragment for live previews.
// Viewers read a rubric's page too, and choose the dataset and criterion
// its preview shows: for them it previews the rubric as stored, whatever
// the form holds, since they change no rubric.
func (h *Handlers) previewRubric(c echo.Context) error {
	fragmentErrors(c)
	params, err := c.FormParams()
	if err != nil {
		return models.Errorf(models.EInvalid, "the form could not be read: %v", err)
	}
	f := parseRubricForm(params)
	var stored models.Rubric
	if id, _ := strconv.ParseInt(params.Get("rubric_id"), 10, 64); id > 0 {
		r, err := h.DB.FindRubric(c.Request().Context(), h.workspaceID(c), id)
		if err != nil {
			return err
		}
		stored = r
	}
	if p := principalOf(c.Request().Context()); !p.Role.AtLeast(models.RoleEditor) {
		if stored.ID == 0 {
			// Only an editor's new-rubric page previews a rubric not saved.
			return models.Errorf(models.EInvalid, "rubric_id is missing: as %s you preview a saved rubric, so give its id (open the rubric's page)", p.Role)
		}
		dataset, criterion := f.PreviewDataset, f.PreviewCriterion
		f = formOfRubric(stored.Name, stored.Evaluator())
		f.PreviewDataset, f.PreviewCriterion = dataset, criterion
	}
	// The rubric's project: a stored rubric's own, a new one's as the
	// editor's form sends it. A new rubric belongs to a project, and its
	// preview shows that project's datasets only, as the editor's Dataset
	// list offers them: a script leaving project_id out previewed on any
	// dataset of the workspace, so it is asked for, as a viewer is asked
	// for rubric_id.
	projectID := stored.ProjectID
	if projectID == 0 {
		raw := strings.TrimSpace(params.Get("project_id"))
		if raw == "" {
			return models.Errorf(models.EInvalid, "project_id is missing: a new rubric's preview shows one of its project's datasets, so give the project's id (project_id), as the rubric editor sends it, or rubric_id to preview a saved rubric")
		}
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return models.Errorf(models.EInvalid, "project_id %q is not a project id: give the number of the project the rubric is for (its page's address, /projects/ID)", raw)
		}
		p, err := h.DB.FindProject(c.Request().Context(), h.workspaceID(c), id)
		if err != nil {
			return err
		}
		projectID = p.ID
	}
	if f.PreviewDataset == 0 {
		// No dataset chosen: in a project without datasets (the page has
		// no Dataset select) say so, not "choose one".
		if projectID > 0 {
			datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), projectID)
			if err != nil {
				return err
			}
			if len(datasets) == 0 {
				return renderFragment(c, web.RubricPreviewFragment(web.RubricPreview{Problem: noPreviewDataset}))
			}
		}
	}
	return renderFragment(c, web.RubricPreviewFragment(h.buildPreview(c.Request().Context(), h.workspaceID(c), projectID, f, stored)))
}

// renderRubricEditor shows the editor; withPreview also builds the prompt
// preview (skipped after add and remove, where the criteria just changed).
func (h *Handlers) renderRubricEditor(c echo.Context, status int, p models.Project, r models.Rubric, f rubricForm, msg string, withPreview bool) error {
	ctx := c.Request().Context()
	datasets, err := h.DB.ListDatasets(ctx, h.workspaceID(c), p.ID)
	if err != nil {
		return err
	}
	action := projectPath(p.ID) + "/rubrics"
	title := "New rubric"
	if r.ID != 0 {
		action = "/rubrics/" + strconv.FormatInt(r.ID, 10)
		title = "Edit " + r.Name
		if !principalOf(ctx).Role.AtLeast(models.RoleEditor) {
			title = r.Name // a viewer reads it
		}
	}
	v := web.RubricEditorView{
		Page: page(c, title), Project: p, RubricID: r.ID, Action: action,
		Name: f.Name, Task: f.Task, Criteria: f.Criteria, Datasets: datasets,
		PreviewCriterion: f.PreviewCriterion, Error: msg, Notice: f.notice, ImportError: f.importError, ImportProblems: f.importProblems, FieldErrors: f.fieldErrors, Version: r.Version,
		Revision: f.revision, SavedMeanwhile: f.savedMeanwhile,
		Manage: manageFor(c, models.KindRubric, r.ID, r.Name, r.ArchivedAt),
	}
	for _, t := range rubrictemplates.All() {
		v.Templates = append(v.Templates, web.RubricTemplate{Key: t.Key, Name: t.Name, Summary: t.Summary})
	}
	for _, d := range datasets {
		if d.ID == f.PreviewDataset {
			v.PreviewDataset = d.ID
		}
	}
	v.HumanColumns = ratingColumnsOf(datasets)
	// Where a criterion's ratings are matched: name those outside its
	// scale, as the launch form does.
	crits := make([]evaluator.Criterion, len(f.Criteria))
	for i, cf := range f.Criteria {
		if crit, err := criterionFromForm(cf, i); err == nil && crit.Hi > crit.Lo {
			crits[i] = crit
		}
	}
	for _, d := range datasets {
		off, err := h.offScaleRatings(ctx, d, crits)
		if err != nil {
			return err
		}
		for i, w := range off {
			if v.OffScale == nil {
				v.OffScale = map[int][]string{}
			}
			v.OffScale[i] = append(v.OffScale[i], w)
		}
	}
	// Unchosen, the preview shows the dataset a run would judge: the main
	// one, as the launch form chooses it, not the newest upload (perhaps a
	// noisy copy, or a file just uploaded to try).
	if d := mainDataset(p, datasets); v.PreviewDataset == 0 && d != nil {
		v.PreviewDataset = d.ID
	}
	switch {
	case len(datasets) == 0:
		// Said where the preview would be, as the live preview says it.
		v.Preview = &web.RubricPreview{Problem: noPreviewDataset}
	case withPreview && v.PreviewDataset != 0:
		f.PreviewDataset = v.PreviewDataset
		pv := h.buildPreview(ctx, h.workspaceID(c), p.ID, f, r)
		v.Preview = &pv
	}
	return render(c, status, web.RubricEditorPage(v))
}

// noPreviewDataset is what the prompt preview says in a project without
// datasets: there are no samples to show the prompt on.
const noPreviewDataset = "This project has no dataset yet, so there is no sample to preview the prompt on: upload a dataset (Datasets, Upload) and the preview shows the prompt for its first rows."

// buildPreview builds the messages of the first batch the judge would get
// for one criterion on the chosen dataset, with the default settings.
// stored is the rubric as saved (zero for a new one): its own fields (none
// means the dataset's) and the labelled examples its criteria carry, which
// the form does not and a saved edit keeps (keepExamples), so the preview
// is the prompt a run would send. project is the rubric's project (0 when
// a script previews a new rubric without naming one): a dataset of
// another project is refused as one that does not exist is, since the
// editor's Dataset select offers the project's own datasets only.
func (h *Handlers) buildPreview(ctx context.Context, ws, project int64, f rubricForm, stored models.Rubric) web.RubricPreview {
	fields := stored.Fields
	if f.PreviewDataset == 0 {
		return web.RubricPreview{Problem: "Choose a dataset to preview the prompt."}
	}
	if len(f.Criteria) == 0 {
		return web.RubricPreview{Problem: "Add a criterion to preview its prompt."}
	}
	ds, err := h.DB.FindDataset(ctx, ws, f.PreviewDataset)
	if err != nil {
		return web.RubricPreview{Problem: "No preview: " + models.ErrorMessage(err)}
	}
	if project != 0 && ds.ProjectID != project {
		return web.RubricPreview{Problem: fmt.Sprintf("No preview: dataset %d belongs to another project; choose one of this project's datasets in the Dataset list.", ds.ID)}
	}
	i := f.PreviewCriterion
	if i < 0 || i >= len(f.Criteria) {
		i = 0
	}
	crit, err := criterionFromForm(f.Criteria[i], i)
	if err != nil {
		return web.RubricPreview{Problem: "No preview: " + err.Error()}
	}
	// A prompt judging a nameless criterion shows nothing worth reading
	// (saving asks for the name too).
	if crit.Name == "" {
		return web.RubricPreview{Problem: fmt.Sprintf("Give criterion %d a name to preview its prompt.", i+1)}
	}
	// Which stored criterion a row was depends on every row (a stored
	// name is claimed once), so match them all and keep row i's.
	all := make([]evaluator.Criterion, len(f.Criteria))
	for j, cf := range f.Criteria {
		all[j] = evaluator.Criterion{Name: strings.TrimSpace(cf.Name), Lo: crit.Lo, Hi: crit.Hi}
	}
	all[i] = crit
	kept, _, _ := keepExamples(stored.Criteria, all, storedNames(f.Criteria))
	crit = kept[i]
	settings := evaluator.DefaultSettings()
	rows, err := h.DB.ListDatasetRows(ctx, ds.ID, 0, settings.BatchSize)
	if err != nil {
		h.Log.Error("preview rows", "dataset", ds.ID, "err", err)
		return web.RubricPreview{Problem: "No preview: the dataset's rows could not be read."}
	}
	if len(rows) == 0 {
		return web.RubricPreview{Problem: fmt.Sprintf("The dataset %s has no rows to preview the prompt on: choose another dataset.", web.Quoted(ds.Name))}
	}
	if len(fields) == 0 {
		fields = ds.Fields
	}
	samples := make([]evaluator.Sample, len(rows))
	for j, row := range rows {
		samples[j] = row.Sample(fields)
	}
	rub := evaluator.Rubric{Task: strings.TrimSpace(f.Task), Fields: fields, Criteria: []evaluator.Criterion{crit}}
	msgs := evaluator.BuildBatchPrompt(rub, crit, samples, settings)
	first, last := rows[0], rows[len(rows)-1]
	return web.RubricPreview{Dataset: ds.Name, Criterion: crit.Name, Samples: len(samples), Messages: msgs, Tokens: evaluator.EstimateTokens(msgs),
		FirstRow: first.Position, LastRow: last.Position, FirstSample: first.ExternalID, LastSample: last.ExternalID}
}

// parseRubricForm reads the editor's fields; criteria come as
// criteria[N].part and are kept in the order of N.
func parseRubricForm(params url.Values) rubricForm {
	f := rubricForm{Name: params.Get("name"), Task: params.Get("task"), revision: params.Get("revision")}
	f.PreviewDataset, _ = strconv.ParseInt(params.Get("preview_dataset"), 10, 64)
	f.PreviewCriterion, _ = strconv.Atoi(params.Get("preview_criterion"))
	byIndex := map[int]*web.CriterionForm{}
	for key, vals := range params {
		rest, ok := strings.CutPrefix(key, "criteria[")
		if !ok {
			continue
		}
		num, part, ok := strings.Cut(rest, "].")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 {
			continue
		}
		cf := byIndex[n]
		if cf == nil {
			if len(byIndex) >= maxCriteria {
				continue
			}
			cf = &web.CriterionForm{}
			byIndex[n] = cf
		}
		val := vals[0]
		switch part {
		case "name":
			cf.Name = val
		case "description":
			cf.Description = val
		case "lo":
			cf.Lo = val
		case "hi":
			cf.Hi = val
		case "low":
			cf.Low = val
		case "middle":
			cf.Middle = val
		case "high":
			cf.High = val
		case "human":
			cf.HumanColumn = val
		case "stored":
			cf.Stored = val
		case "annotators":
			for _, a := range vals {
				if a = strings.TrimSpace(a); a != "" && !slices.Contains(cf.Annotators, a) {
					cf.Annotators = append(cf.Annotators, a)
				}
			}
		}
	}
	indexes := make([]int, 0, len(byIndex))
	for n := range byIndex {
		indexes = append(indexes, n)
	}
	slices.Sort(indexes)
	for _, n := range indexes {
		f.Criteria = append(f.Criteria, *byIndex[n])
	}
	return f
}

// storedNames are the stored names the form's criterion rows were loaded
// with ("" for rows added in the editor), for keepExamples.
func storedNames(cs []web.CriterionForm) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Stored
	}
	return out
}

// problems lists everything that stops the form from being saved, by
// the id of the field it belongs next to: all at once, not the first.
func (f rubricForm) problems() map[string][]string {
	out := map[string][]string{}
	add := func(field, msg string) { out[field] = append(out[field], msg) }
	if strings.TrimSpace(f.Name) == "" {
		add("rubric-name", "The rubric needs a name.")
	}
	if strings.TrimSpace(f.Task) == "" {
		// Not the field's hint again, which showed twice and never said
		// what was wrong (QA, a rubric written from scratch).
		add("rubric-task", "The rubric needs a task description: say what one sample is, e.g. a conversation and the next response a chatbot gave.")
	}
	if len(f.Criteria) == 0 {
		add("criteria", "Add at least one criterion.")
	}
	seen := map[string]int{}
	for i, cf := range f.Criteria {
		name := strings.TrimSpace(cf.Name)
		switch j, dup := seen[strings.ToLower(name)]; {
		case name == "":
			add(criterionInputID(i, "name"), "The criterion needs a name.")
		case evaluator.OneLineProblem(name) != "":
			add(criterionInputID(i, "name"), fmt.Sprintf("The name %s holds %s: the judge reads it as one line of its prompt, so write it on one line.", web.Quoted(name), evaluator.OneLineProblem(name)))
		case dup:
			// Quote the earlier criterion's own spelling: "Quality" and
			// "quality" are one name, and the message names both.
			first := strings.TrimSpace(f.Criteria[j].Name)
			if first == name {
				add(criterionInputID(i, "name"), fmt.Sprintf("Criterion %d is also called %s: names must differ.", j+1, web.Quoted(first)))
			} else {
				add(criterionInputID(i, "name"), fmt.Sprintf("Criterion %d is called %s, the same name as %s apart from capitals: names must differ.", j+1, web.Quoted(first), web.Quoted(name)))
			}
		default:
			seen[strings.ToLower(name)] = i
		}
		var ends [2]*float64
		for k, part := range []struct{ key, what, text string }{{"lo", "lowest", cf.Lo}, {"hi", "highest", cf.Hi}} {
			v, problem := scoreEnd(part.text)
			if problem != "" {
				add(criterionInputID(i, part.key), fmt.Sprintf("The %s score %s %s.", part.what, web.Quoted(part.text), problem))
				continue
			}
			ends[k] = &v
		}
		if ends[0] != nil && ends[1] != nil {
			if !(*ends[0] < *ends[1]) {
				add(criterionInputID(i, "hi"), fmt.Sprintf("The highest score (%g) must be above the lowest (%g).", *ends[1], *ends[0]))
			} else if problem := evaluator.ScaleProblem(*ends[0], *ends[1]); problem != "" {
				add(criterionInputID(i, "hi"), upperFirst(problem)+".")
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// columns are the rating columns the form's criteria name.
// columnsOver gives the rating columns of the typed criteria, each with
// the columns the stored criterion it edits (by its Stored name) named.
func (f rubricForm) columnsOver(stored []evaluator.Criterion) []criterionColumns {
	out := make([]criterionColumns, len(f.Criteria))
	for i, cf := range f.Criteria {
		out[i] = criterionColumns{Name: strings.TrimSpace(cf.Name), Human: cf.HumanColumn, Annotators: cf.Annotators}
		if cf.Stored == "" {
			continue
		}
		for _, cr := range stored {
			if cr.Name == cf.Stored {
				out[i].Kept = append([]string{cr.HumanColumn}, cr.AnnotatorColumns...)
			}
		}
	}
	return out
}

// criterionInputID is the id of a criterion's input in the editor.
func criterionInputID(i int, part string) string {
	return "criteria[" + strconv.Itoa(i) + "]." + part
}

// criteria converts the typed criteria, reporting the first unreadable number.
func (f rubricForm) criteria() ([]evaluator.Criterion, error) {
	out := make([]evaluator.Criterion, len(f.Criteria))
	for i, cf := range f.Criteria {
		c, err := criterionFromForm(cf, i)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// criterionFromForm converts the i-th typed criterion, parsing its range.
func criterionFromForm(cf web.CriterionForm, i int) (evaluator.Criterion, error) {
	who := fmt.Sprintf("criterion %d", i+1)
	if n := strings.TrimSpace(cf.Name); n != "" {
		who = fmt.Sprintf("criterion %s", web.Quoted(n))
	}
	num := func(what, s string) (float64, error) {
		v, problem := scoreEnd(s)
		if problem != "" {
			return 0, models.Errorf(models.EInvalid, "%s: the %s score %s %s", who, what, web.Quoted(s), problem)
		}
		return v, nil
	}
	lo, err := num("lowest", cf.Lo)
	if err != nil {
		return evaluator.Criterion{}, err
	}
	hi, err := num("highest", cf.Hi)
	if err != nil {
		return evaluator.Criterion{}, err
	}
	return evaluator.Criterion{
		Name: strings.TrimSpace(cf.Name), Description: strings.TrimSpace(cf.Description), Lo: lo, Hi: hi,
		Levels:      evaluator.Levels{Low: strings.TrimSpace(cf.Low), Middle: strings.TrimSpace(cf.Middle), High: strings.TrimSpace(cf.High)},
		HumanColumn: cf.HumanColumn, AnnotatorColumns: cf.Annotators,
	}, nil
}

// findRubric loads the rubric named by :id and its project.
func (h *Handlers) findRubric(c echo.Context) (models.Rubric, models.Project, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Rubric{}, models.Project{}, err
	}
	ctx := c.Request().Context()
	r, err := h.DB.FindRubric(ctx, h.workspaceID(c), id)
	if err != nil {
		return r, models.Project{}, err
	}
	p, err := h.DB.FindProject(ctx, h.workspaceID(c), r.ProjectID)
	return r, p, err
}

func projectPath(id int64) string { return "/projects/" + strconv.FormatInt(id, 10) }

// criteriaWithoutRatings names the criteria that read no human rating
// (no column, no annotator columns) while the project's datasets hold
// rating columns, and those columns; nothing when there are none to choose.
func (h *Handlers) criteriaWithoutRatings(c echo.Context, p models.Project, criteria []evaluator.Criterion) (unrated, ratings []string, err error) {
	datasets, err := h.DB.ListDatasets(c.Request().Context(), h.workspaceID(c), p.ID)
	if err != nil {
		return nil, nil, err
	}
	ratings = ratingColumnsOf(datasets)
	if len(ratings) == 0 {
		return nil, nil, nil
	}
	for _, cr := range criteria {
		if !ratedCriterion(cr) {
			unrated = append(unrated, cr.Name)
		}
	}
	return unrated, ratings, nil
}

// joinQuoted lists names in quotes: "a", "b" and "c".
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = web.Quoted(n)
	}
	return joinNames(q)
}

// showRubric answers a rubric's bare address (typed, or cut back from a
// longer one; it answered 405) with its page, the editor, once the rubric
// is found in the request's workspace.
func (h *Handlers) showRubric(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.DB.FindRubric(c.Request().Context(), h.workspaceID(c), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/rubrics/"+strconv.FormatInt(id, 10)+"/edit")
}

// scoreEnd reads a criterion's lowest or highest score as typed in the
// editor, or says why it cannot ("is not a number (...)", to follow the
// score's name): the forms' decimal reader (typedDecimal), so "0,5" is
// 0.5 and "1,000" is refused as unsure.
func scoreEnd(text string) (float64, string) { return typedDecimal(text, "2.5") }
