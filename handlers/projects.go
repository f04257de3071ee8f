package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/web"
)

// listProjects is the home page.
func (h *Handlers) listProjects(c echo.Context) error {
	return h.renderProjects(c, http.StatusOK, web.ProjectForm{})
}

func (h *Handlers) renderProjects(c echo.Context, status int, form web.ProjectForm) error {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	show, filter := showFilter(c)
	ps, err := h.DB.ListProjects(ctx, ws, filter)
	if err != nil {
		return err
	}
	// One query per project and kind: fine for the handful of projects a
	// workspace holds; a grouped count in models would replace it if not.
	var guide *web.StartGuide
	if ck, err := c.Cookie(guideCookie); err != nil || ck.Value != "hidden" {
		guide = &web.StartGuide{}
	}
	sums := make([]web.ProjectSummary, len(ps))
	for i, p := range ps {
		ds, err := h.DB.ListDatasets(ctx, ws, p.ID)
		if err != nil {
			return err
		}
		rs, err := h.DB.ListRubrics(ctx, ws, p.ID)
		if err != nil {
			return err
		}
		// Counted, not read: a project may hold thousands of runs.
		runs, err := h.DB.CountRuns(ctx, ws, models.RunFilter{ProjectID: p.ID})
		if err != nil {
			return err
		}
		sums[i] = web.ProjectSummary{Project: p, Datasets: len(ds), Rubrics: len(rs), Runs: runs}
		if guide != nil && p.Name == demo.ProjectName {
			guide.DemoProjectID = p.ID
			// The seeded run is the demo's oldest run of that name.
			first, err := h.DB.ListRunsAfter(ctx, ws, models.RunFilter{ProjectID: p.ID, Name: demo.FirstRunName}, 0, 1)
			if err != nil {
				return err
			}
			for _, r := range first {
				guide.DemoRunID, guide.DemoRunName, guide.DemoRunStatus = r.ID, r.Name, string(r.Status)
			}
		}
	}
	now := time.Now()
	var expiring []models.APIToken
	if p := principalOf(ctx); p.Kind == Account {
		if expiring, err = h.DB.ExpiringAPITokens(ctx, ws, p.User.ID, now); err != nil {
			return err
		}
	}
	return render(c, status, web.ProjectsPage(web.ProjectsView{Page: page(c, "Projects"), Projects: sums, Form: form, Show: show, Guide: guide,
		ExpiringTokens: expiring, Now: now}))
}

// guideCookie remembers that this browser hid the start guide.
const guideCookie = "batcheval_guide"

// setGuide hides or shows the home page's start guide for this browser
// (a form, so it works without JavaScript).
func (h *Handlers) setGuide(c echo.Context) error {
	ck := &http.Cookie{Name: guideCookie, Value: "hidden", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		MaxAge: 400 * 24 * 3600} // about the longest browsers keep a cookie
	if c.FormValue("guide") == "show" {
		ck.Value, ck.MaxAge = "", -1
	}
	setCookie(c, ck)
	if ck.MaxAge < 0 {
		return c.Redirect(http.StatusSeeOther, "/#start-guide")
	}
	return c.Redirect(http.StatusSeeOther, "/")
}

// formSentence writes a model's message (a clause in lower case, as the
// API answers it) as a form's message: a sentence, its first letter in
// capitals, ending with a full stop.
func formSentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return upperFirst(msg)
}

// nameNeededText is a form's message for an object's name left empty: a
// sentence saying what to do, naming the form's button (the New project
// form's "Create project", a rename form's "Rename"). The model's "a
// project needs a name" is the API's wording.
func nameNeededText(k models.Kind, button string) string {
	return "Give the " + string(k) + " a name, then press " + button + " again."
}

// nameFormText is a name form's message for the model's refusal (err,
// EInvalid) of the name typed: nameNeededText when it was empty, else the
// model's message as a sentence (formSentence). The New project form and
// the rename form say it alike.
func nameFormText(k models.Kind, typed, button string, err error) string {
	if strings.TrimSpace(typed) == "" {
		return nameNeededText(k, button)
	}
	return formSentence(models.ErrorMessage(err))
}

// showProjectsAddress answers /projects opened as a page (typed into the
// address bar, or bookmarked): the projects are listed on the home page, so
// it sends the person there, keeping the list's choice (?show=archived).
// It was the "this address is a button's" page, the New project form's
// address, to someone who expected the list.
func showProjectsAddress(c echo.Context) error {
	to := "/"
	if q := c.Request().URL.RawQuery; q != "" {
		to += "?" + q
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// createProject handles the "New project" form. A refused name or
// description is said next to its input and in the summary at the top of
// the page, both at once when both are refused; what was typed is kept.
func (h *Handlers) createProject(c echo.Context) error {
	p := models.Project{
		WorkspaceID: h.workspaceID(c),
		Name:        strings.TrimSpace(c.FormValue("name")),
		Description: strings.TrimSpace(c.FormValue("description")),
	}
	form := web.ProjectForm{
		// Shortened: a refused megabyte name is not sent back whole.
		Name: shortenText(p.Name, models.MaxNameLength), Description: shortenText(p.Description, models.MaxDescriptionLength),
	}
	var r formRefusal
	// The same checks as models.CreateProject, field by field, so each
	// message goes to its input.
	if _, err := models.CheckNewName(models.KindProject, p.Name); err != nil {
		// Said as the other forms say it, with what to do.
		r.add("project-name", nameFormText(models.KindProject, p.Name, "Create project", err))
	}
	if err := models.CheckLength("project description", p.Description, models.MaxDescriptionLength); err != nil {
		r.add("project-description", formSentence(models.ErrorMessage(err)))
	}
	if !r.refused() {
		err := h.DB.CreateProject(c.Request().Context(), &p)
		if err == nil {
			return redirect(c, projectPath(p.ID), "Project created. Start by uploading a dataset.")
		}
		if models.ErrorCode(err) != models.EInvalid {
			return err
		}
		// A refusal the checks above do not foresee: about the form.
		r.add("", formSentence(models.ErrorMessage(err)))
	}
	form.Errors, form.FieldErrors = r.errors, r.fields
	return h.renderProjects(c, http.StatusUnprocessableEntity, form)
}

// showProject is a project's page.
func (h *Handlers) showProject(c echo.Context) error {
	p, err := h.findProject(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	v := web.ProjectView{Page: page(c, p.Name), Project: p, Manage: manageFor(c, models.KindProject, p.ID, p.Name, p.ArchivedAt)}
	var filter models.ListOption
	v.Show, filter = showFilter(c)
	if v.Datasets, err = h.DB.ListDatasets(ctx, ws, p.ID, filter); err != nil {
		return err
	}
	live, err := h.DB.ListDatasets(ctx, ws, p.ID)
	if err != nil {
		return err
	}
	if d := mainDataset(p, live); d != nil {
		v.MainDatasetID = d.ID
	}
	if v.Rubrics, err = h.DB.ListRubrics(ctx, ws, p.ID, filter); err != nil {
		return err
	}
	// The project page shows the latest runs; the runs page has them all.
	const recentRuns = 20
	runs, err := h.DB.ListRunsPage(ctx, ws, models.RunFilter{ProjectID: p.ID}, 0, recentRuns, filter)
	if err != nil {
		return err
	}
	if v.Runs, err = h.runListItems(ctx, runs, map[int64]string{}); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ProjectPage(v))
}

// findProject loads the project named by the :id path parameter.
func (h *Handlers) findProject(c echo.Context) (models.Project, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.Project{}, err
	}
	return h.DB.FindProject(c.Request().Context(), h.workspaceID(c), id)
}

// markMainDataset makes a dataset its project's main one: the launch form
// chooses it by default.
func (h *Handlers) markMainDataset(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	d, err := h.DB.SetMainDataset(c.Request().Context(), h.workspaceID(c), id)
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			setFlash(c, "error", models.ErrorMessage(err))
			return c.Redirect(http.StatusSeeOther, projectPath(d.ProjectID)+"#datasets")
		}
		return err
	}
	return redirect(c, projectPath(d.ProjectID)+"#datasets", fmt.Sprintf("%s is now the main dataset: new runs use it unless you choose another.", web.Quoted(d.Name)))
}
