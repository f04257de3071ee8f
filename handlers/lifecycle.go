package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Rename, archive, delete, the trash: one set of handlers for the six
// kinds, made per kind by the route table.

// lifecycleBase is the address the lifecycle routes of an object hang off.
func lifecycleBase(k models.Kind, id int64) string {
	return "/" + string(k) + "s/" + strconv.FormatInt(id, 10)
}

// manageRole is the role that renames, archives and deletes a kind:
// judges hold keys and spend money, so they are the owners'.
func manageRole(k models.Kind) models.Role {
	if k == models.KindJudge {
		return models.RoleOwner
	}
	return models.RoleEditor
}

// manageFor builds the manage box of an object's page.
func manageFor(c echo.Context, k models.Kind, id int64, name string, archivedAt *time.Time) web.Manage {
	p := principalOf(c.Request().Context())
	return web.Manage{Kind: k, ID: id, Name: name, BaseURL: lifecycleBase(k, id), ViewURL: web.ObjectURL(k, id),
		ArchivedAt: archivedAt, CanEdit: p.Workspace.ID != 0 && p.Role.AtLeast(manageRole(k)), MaxName: models.MaxNameFor(k)}
}

// showFilter reads a list's ?show= archive filter.
func showFilter(c echo.Context) (string, models.ListOption) {
	switch c.QueryParam("show") {
	case web.ShowArchived:
		return web.ShowArchived, models.OnlyArchived()
	case web.ShowAll:
		return web.ShowAll, models.WithArchived()
	}
	return web.ShowActive, models.Archived(models.ActiveOnly)
}

// lifecycleObject is what the lifecycle pages need of a live object.
type lifecycleObject struct {
	name       string
	archivedAt *time.Time
	// after is where to go once the object is in the trash.
	after string
	// projectID is the project the object lives under (0 for a project
	// or a judge).
	projectID int64
}

func (h *Handlers) findLifecycleObject(ctx context.Context, wsID int64, k models.Kind, id int64) (lifecycleObject, error) {
	var o lifecycleObject
	switch k {
	case models.KindProject:
		p, err := h.DB.FindProject(ctx, wsID, id)
		return lifecycleObject{p.Name, p.ArchivedAt, "/", 0}, err
	case models.KindDataset:
		d, err := h.DB.FindDataset(ctx, wsID, id)
		return lifecycleObject{d.Name, d.ArchivedAt, projectPath(d.ProjectID), d.ProjectID}, err
	case models.KindRubric:
		r, err := h.DB.FindRubric(ctx, wsID, id)
		return lifecycleObject{r.Name, r.ArchivedAt, projectPath(r.ProjectID), r.ProjectID}, err
	case models.KindJudge:
		j, err := h.DB.FindJudge(ctx, wsID, id)
		return lifecycleObject{j.Name, j.ArchivedAt, "/judges", 0}, err
	case models.KindRun:
		r, err := h.DB.FindRun(ctx, wsID, id)
		return lifecycleObject{r.Name, r.ArchivedAt, projectPath(r.ProjectID), r.ProjectID}, err
	case models.KindExperiment:
		e, err := h.DB.FindExperiment(ctx, wsID, id)
		return lifecycleObject{e.Name, e.ArchivedAt, projectPath(e.ProjectID) + "/experiments", e.ProjectID}, err
	}
	return o, models.Errorf(models.ENotFound, "no such kind %s", web.Quoted(string(k)))
}

// lifecycleParents is the start of a rename or delete page's trail, the
// steps before the object itself, as the object's own page starts its
// trail: for what lives under a project, the project (projectCrumb: its
// name, or a neutral label when it cannot be read) and the project's list
// that holds the object; the judges' list for a judge; nothing for a
// project, which is the trail's first step itself.
func (h *Handlers) lifecycleParents(ctx context.Context, wsID int64, k models.Kind, o lifecycleObject) []web.Crumb {
	if k == models.KindJudge {
		return []web.Crumb{{Label: "Judges", Href: "/judges"}}
	}
	if o.projectID == 0 {
		return nil
	}
	project := h.projectCrumb(ctx, wsID, o.projectID)
	list := web.Crumb{Label: "Runs", Href: "/runs"} // as the run page's trail
	switch k {
	case models.KindDataset:
		list = web.Crumb{Label: "Datasets", Href: templ.SafeURL(projectPath(o.projectID) + "#datasets")}
	case models.KindRubric:
		list = web.Crumb{Label: "Rubrics", Href: templ.SafeURL(projectPath(o.projectID) + "#rubrics")}
	case models.KindExperiment:
		list = web.Crumb{Label: "Experiments", Href: templ.SafeURL(projectPath(o.projectID) + "/experiments")}
	}
	return []web.Crumb{project, list}
}

func auditTarget(k models.Kind, id int64) string { return string(k) + " " + strconv.FormatInt(id, 10) }

// renameObject handles a manage box's rename form.
func (h *Handlers) renameObject(k models.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := paramID(c, "id")
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		typed := c.FormValue("name")
		// The name the form was shown with: the rename applies only over
		// it, so a rename made since in another tab is not overwritten.
		was := c.FormValue("was")
		_, err = h.DB.RenameIf(ctx, h.workspaceID(c), k, id, typed, was, auditOf(c, func(n models.NameChange) models.AuditNote {
			return models.AuditNote{Action: models.AuditRenamed, Target: auditTarget(k, id), Detail: fmt.Sprintf("%q → %q", n.Old, n.New)}
		}))
		if code := models.ErrorCode(err); code == models.EInvalid || code == models.EChanged {
			o, ferr := h.findLifecycleObject(ctx, h.workspaceID(c), k, id)
			if ferr != nil {
				return ferr
			}
			// A sentence saying what to do, as the New project form says it
			// (nameFormText); the model's clause is the API's wording.
			status, msg := http.StatusUnprocessableEntity, nameFormText(k, typed, "Rename", err)
			// Show back at most what the field accepts, not a huge post.
			if r := []rune(typed); len(r) > models.MaxNameFor(k) {
				typed = string(r[:models.MaxNameFor(k)])
			}
			if models.ErrorCode(err) == models.EChanged {
				// Shown with the name it has now (the form's was), so
				// renaming again replaces that name knowingly.
				status = http.StatusConflict
				msg = "Not renamed: someone renamed this " + string(k) + " to " + web.Quoted(o.name) + " after you opened the page. Your name is kept below: rename again to replace theirs."
			}
			v := web.RenameView{Page: page(c, "Rename "+string(k)), Manage: manageFor(c, k, id, o.name, o.archivedAt), Typed: typed,
				Parents: h.lifecycleParents(ctx, h.workspaceID(c), k, o)}
			if status == http.StatusConflict {
				v.Error = msg // about the object, not the name typed
			} else {
				v.FieldErrors = map[string][]string{"rename-name": {msg}}
			}
			return render(c, status, web.RenamePage(v))
		}
		if err != nil {
			return err
		}
		return redirect(c, web.ObjectURL(k, id), "Renamed.")
	}
}

// archiveObject archives an object, or brings it back from the archive.
func (h *Handlers) archiveObject(k models.Kind, archived bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := paramID(c, "id")
		if err != nil {
			return err
		}
		action := models.AuditUnarchived
		if archived {
			action = models.AuditArchived
		}
		_, err = h.DB.SetArchived(c.Request().Context(), h.workspaceID(c), k, id, archived, auditOf(c, func(name string) models.AuditNote {
			return models.AuditNote{Action: action, Target: auditTarget(k, id), Detail: name}
		}))
		if err != nil {
			return err
		}
		if archived {
			return redirect(c, web.ObjectURL(k, id), "Archived: hidden from lists (choose “archived” above a list to see it), and it works as before.")
		}
		return redirect(c, web.ObjectURL(k, id), "Back from the archive: it shows in lists again.")
	}
}

// showDeleteObject is the confirmation page of a deletion: what goes with
// the object (a dataset's runs...) and what is cancelled first.
func (h *Handlers) showDeleteObject(k models.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := paramID(c, "id")
		if err != nil {
			return err
		}
		return h.renderDelete(c, http.StatusOK, k, id, "")
	}
}

func (h *Handlers) renderDelete(c echo.Context, status int, k models.Kind, id int64, msg string) error {
	ctx, ws := c.Request().Context(), h.workspaceID(c)
	plan, err := h.DB.PlanTrash(ctx, ws, k, id)
	if err != nil {
		return err
	}
	o, err := h.findLifecycleObject(ctx, ws, k, id)
	if err != nil {
		return err
	}
	return render(c, status, web.DeletePage(web.DeleteView{Page: page(c, "Delete "+plan.Name), Plan: plan,
		BaseURL: lifecycleBase(k, id), ViewURL: web.ObjectURL(k, id), Error: msg, Parents: h.lifecycleParents(ctx, ws, k, o)}))
}

// deleteObject moves an object and what goes with it to the trash. A post
// without confirm=yes goes to the confirmation page instead. Unfinished
// runs among what goes are cancelled first: a run in the trash must not
// keep calling (and paying) the judge, and refusing would only send the
// person to cancel each run by hand. Only what the confirmation page
// listed (its hidden "listed", TrashPlan.Listing) is cancelled and moved:
// when more would go now (a run launched since), nothing is, and the page
// comes back (409) with the list as it is now. A post without the field
// (a page from before it) checks nothing, as a form without its revision.
func (h *Handlers) deleteObject(k models.Kind) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := paramID(c, "id")
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		ws := h.workspaceID(c)
		o, err := h.findLifecycleObject(ctx, ws, k, id)
		if err != nil {
			return err
		}
		if c.FormValue("confirm") != "yes" {
			return c.Redirect(http.StatusSeeOther, lifecycleBase(k, id)+"/delete")
		}
		// What the confirmation page listed: nothing else is cancelled or
		// moved (a run launched after the page was shown is not lost).
		listing := c.FormValue("listed")
		plan, err := h.DB.PlanTrash(ctx, ws, k, id)
		if err != nil {
			return err
		}
		if err := plan.CheckListed(listing); err != nil {
			return h.renderDelete(c, http.StatusConflict, k, id, moreToDelete(err, false))
		}
		cancelled := false
		for _, runID := range plan.Unfinished {
			if _, err := h.Runner.Cancel(ctx, ws, runID); err != nil {
				if models.ErrorCode(err) == models.EConflict {
					continue // finished meanwhile
				}
				return err
			}
			cancelled = true
			h.audit(c, models.AuditRunCancelled, auditTarget(models.KindRun, runID), "before deleting "+auditTarget(k, id))
		}
		p := principalOf(ctx)
		e, plan, err := h.DB.TrashIf(ctx, ws, k, id, models.Actor{UserID: p.userID(), Label: p.ActorLabel()}, listing,
			auditOf(c, func(e models.TrashEntry) models.AuditNote {
				return models.AuditNote{Action: models.AuditDeleted, Target: auditTarget(k, id), Detail: trashDetail(e)}
			}))
		if models.ErrorCode(err) == models.EChanged {
			// More came between the check above and the move.
			return h.renderDelete(c, http.StatusConflict, k, id, moreToDelete(err, cancelled))
		}
		if models.ErrorCode(err) == models.EConflict {
			return h.renderDelete(c, http.StatusConflict, k, id, models.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("Moved %s %s to the trash", k, web.Quoted(e.Name))
		if s := plan.Summary(); s != "" {
			msg += " with " + s
		}
		return redirect(c, o.after, msg+". It can be restored from the Trash page for 30 days.")
	}
}

// moreToDelete words a deletion refused because more would go than its
// confirmation page listed; cancelled says the runs that page listed as
// cancelled first were cancelled before the refusal.
func moreToDelete(err error, cancelled bool) string {
	msg := "Nothing was moved to the trash: " + models.ErrorMessage(err) + "."
	if cancelled {
		msg += " The runs the page said would be cancelled first were cancelled."
	}
	return msg + " The list below is as it is now: confirm again to delete all of it, or keep it."
}

// showTrash lists the workspace's trash.
func (h *Handlers) showTrash(c echo.Context) error {
	es, err := h.DB.ListTrash(c.Request().Context(), h.workspaceID(c))
	if err != nil {
		return err
	}
	p := principalOf(c.Request().Context())
	v := web.TrashView{Page: page(c, "Trash")}
	for _, e := range es {
		v.Entries = append(v.Entries, web.TrashRow{Entry: e, CanRestore: p.Role.AtLeast(manageRole(e.Kind)), CanPurge: p.Role.AtLeast(models.RoleOwner)})
	}
	return render(c, http.StatusOK, web.TrashPage(v))
}

// findTrashEntry reads the :id entry of the workspace's trash.
func (h *Handlers) findTrashEntry(c echo.Context) (models.TrashEntry, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.TrashEntry{}, err
	}
	return h.DB.FindTrashEntry(c.Request().Context(), h.workspaceID(c), id)
}

// restoreTrash brings back everything a trash entry took. A judge comes
// back only for an owner, as only owners delete judges.
func (h *Handlers) restoreTrash(c echo.Context) error {
	e, err := h.findTrashEntry(c)
	if err != nil {
		return err
	}
	p := principalOf(c.Request().Context())
	if need := manageRole(e.Kind); !p.Role.AtLeast(need) {
		return echo.NewHTTPError(http.StatusForbidden, "Your role in this workspace ("+string(p.Role)+") does not allow this: it needs "+string(need)+".")
	}
	if _, err := h.DB.Restore(c.Request().Context(), h.workspaceID(c), e.ID, auditOf(c, trashNote(models.AuditRestored))); err != nil {
		if models.ErrorCode(err) == models.EConflict {
			setFlash(c, "error", models.ErrorMessage(err))
			return c.Redirect(http.StatusSeeOther, "/trash")
		}
		return err
	}
	return redirect(c, web.ObjectURL(e.Kind, e.ObjectID), fmt.Sprintf("Restored %s %s.", e.Kind, web.Quoted(e.Name)))
}

// trashNote describes an action on a trash entry (restored, purged).
func trashNote(action string) func(models.TrashEntry) models.AuditNote {
	return func(e models.TrashEntry) models.AuditNote {
		return models.AuditNote{Action: action, Target: auditTarget(e.Kind, e.ObjectID), Detail: trashDetail(e)}
	}
}

func trashDetail(e models.TrashEntry) string {
	if e.Detail == "" {
		return e.Name
	}
	return e.Name + "; with " + e.Detail
}

// purgeTrash removes a trash entry's objects for good (owners). It can't
// be undone, so the trash page's button leads to a page that asks first
// (this same route without confirm=yes).
func (h *Handlers) purgeTrash(c echo.Context) error {
	e, err := h.findTrashEntry(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirm") != "yes" {
		return render(c, http.StatusOK, web.PurgePage(web.PurgeView{Page: page(c, "Delete for good"), Entry: e}))
	}
	// A large run's purge takes a while, a chunk at a time: it finishes
	// even if the browser stops waiting (a purge cut short is finished by
	// the next sweep anyway).
	// The entry is written when the purge is decided (models.Purge), before
	// anything is removed: what it removed is not known yet then.
	if _, _, err := h.DB.Purge(context.WithoutCancel(c.Request().Context()), h.workspaceID(c), e.ID, auditOf(c, trashNote(models.AuditPurged))); err != nil {
		return err
	}
	return redirect(c, "/trash", fmt.Sprintf("%s %s is deleted for good.", e.Kind, web.Quoted(e.Name)))
}
