package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// APITrashNote says, in a not-found answer about an object that is in the
// trash of the caller's workspace, where it went and how it comes back.
// It is sent only to a member of that workspace (every caller of a run's
// endpoints is one: their rule needs a viewer), who can read the Trash
// page anyway; anyone else gets the plain not-found answer of a missing
// object.
type APITrashNote struct {
	// EntryID is the trash entry that holds the object: the run's own,
	// or the entry of the project, dataset or experiment it went with.
	EntryID int64 `json:"entry_id"`
	// Kind and Name are the entry's: what was deleted.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// DeletedAt is when the entry went to the trash.
	DeletedAt stamp.Time `json:"deleted_at"`
	// Restorable is false once a purge of the entry has begun.
	Restorable bool `json:"restorable"`
	// Page is the Trash page, where an editor or owner restores it (the
	// API has no restore endpoint).
	Page string `json:"page"`
}

// trashPage is the dashboard's Trash page.
const trashPage = "/trash"

// apiRunInTrash wraps the endpoints of one run (/api/v1/runs/{id}...):
// when one answers that the run was not found and the run is in the
// trash of the caller's workspace, the answer (still 404, code
// not_found, so clients that treat the run as gone keep doing so) says it
// is in the trash, since when, and how to bring it back, with an
// APITrashNote under error.trash. A run of another workspace, or none,
// keeps the plain answer: FindTrashedRun looks only in the caller's
// workspace.
func (h *Handlers) apiRunInTrash(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if models.ErrorCode(err) != models.ENotFound || c.Response().Committed {
			return err
		}
		id, perr := paramID(c, "id")
		if perr != nil {
			return err
		}
		ctx := c.Request().Context()
		wsID := h.workspaceID(c)
		run, terr := h.DB.FindTrashedRun(ctx, wsID, id)
		if terr != nil || run.TrashID == nil {
			return err
		}
		e, terr := h.DB.FindTrashEntry(ctx, wsID, *run.TrashID)
		if terr != nil {
			return err
		}
		note := APITrashNote{EntryID: e.ID, Kind: string(e.Kind), Name: e.Name, DeletedAt: stamp.Of(e.DeletedAt),
			Restorable: e.PurgingAt == nil, Page: trashPage}
		return c.JSON(http.StatusNotFound, apiTrashError{Error: apiTrashErrorBody{Code: models.ENotFound,
			Message: runInTrashText(run, e), Trash: &note}})
	}
}

// apiTrashError is APIError with the trash note: the same shape, one
// optional field more.
type apiTrashError struct {
	Error apiTrashErrorBody `json:"error"`
}

type apiTrashErrorBody struct {
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Trash   *APITrashNote `json:"trash,omitempty"`
}

// runInTrashText tells a member that run is in the trash (in entry e)
// and what to do.
func runInTrashText(run models.Run, e models.TrashEntry) string {
	what := fmt.Sprintf("run %d (%s) is in the trash", run.ID, web.Quoted(run.Name))
	if e.Kind != models.KindRun || e.ObjectID != run.ID {
		what += fmt.Sprintf(": it went with %s %s", e.Kind, web.Quoted(e.Name))
	}
	when := e.DeletedAt.UTC().Format("2006-01-02 15:04 UTC")
	if e.PurgingAt != nil {
		return fmt.Sprintf("%s (deleted %s) and is being removed for good, so it can no longer be restored or read", what, when)
	}
	who := "an editor or owner"
	if manageRole(e.Kind) == models.RoleOwner {
		who = "an owner"
	}
	return fmt.Sprintf("%s (deleted %s), so it cannot be read or changed until it is restored: %s of this workspace can restore it on the Trash page, %s (trash entry %s), within %d days of its deletion; the API has no restore endpoint",
		what, when, who, trashPage, strconv.FormatInt(e.ID, 10), int(models.TrashRetention.Hours()/24))
}
