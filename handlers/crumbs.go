package handlers

import (
	"context"
	"strconv"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/web"
)

// projectCrumb is the first step of the trail of a page under a run (or a
// dataset): the project it belongs to, linking to the project's page, as
// the run page's trail starts. A project that cannot be read (in the trash
// while the run is not) keeps the link under a neutral label, as the run
// page does. Share links never call it: they must not name the project.
func (h *Handlers) projectCrumb(ctx context.Context, wsID, projectID int64) web.Crumb {
	c := web.Crumb{Label: "Project", Href: templ.SafeURL("/projects/" + strconv.FormatInt(projectID, 10))}
	if p, err := h.DB.FindProject(ctx, wsID, projectID); err == nil {
		c.Label = p.Name
	}
	return c
}
