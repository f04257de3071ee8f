package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
)

// apiDefaultShareDays is the expiry of a link made without one: the share
// page's default choice (a week), so a forgotten link does not last forever.
const apiDefaultShareDays = 7

// apiMaxShareDays bounds a link's expiry: a year; longer is "until revoked"
// (expires_in_days 0), which says so in the list.
const apiMaxShareDays = 365

// APIShareLink is a share link as the API lists it. URL (the link itself)
// is only in the answer that made it: only its hash is stored.
type APIShareLink struct {
	ID           int64  `json:"id"`
	Kind         string `json:"kind"`
	RunID        *int64 `json:"run_id"`
	OtherRunID   *int64 `json:"other_run_id"`
	ExperimentID *int64 `json:"experiment_id"`
	Label        string `json:"label"`
	CreatedBy    string `json:"created_by"`
	// CreatedByLeft: the account that made the link is no longer a member
	// of the workspace (the Share links page's "(no longer a member)"); the
	// link keeps working until revoked. False for a link made without an
	// account (local mode).
	CreatedByLeft bool        `json:"created_by_left"`
	CreatedAt     stamp.Time  `json:"created_at"`
	ExpiresAt     *stamp.Time `json:"expires_at"`
	RevokedAt     *stamp.Time `json:"revoked_at"`
	LastOpenedAt  *stamp.Time `json:"last_opened_at"`
	Active        bool        `json:"active"`
	// ReportDeleted: a report of the link is in the trash (or purged), so
	// the link opens nothing, whatever its own state, until it is restored.
	ReportDeleted bool   `json:"report_deleted"`
	URL           string `json:"url,omitempty"`
}

// apiShareLink is l as the API lists it; gone names its deleted reports
// (shareTargets.missing), which make it inactive; members are the user ids
// of the workspace's members (its maker left when not among them).
func apiShareLink(l models.ShareLink, now time.Time, gone []string, members map[int64]bool) APIShareLink {
	return APIShareLink{ID: l.ID, Kind: string(l.Kind), RunID: l.RunID, OtherRunID: l.OtherRunID, ExperimentID: l.ExperimentID,
		Label: l.Label, CreatedBy: l.CreatedByName, CreatedByLeft: l.CreatedBy != nil && !members[*l.CreatedBy], CreatedAt: stamp.Of(l.CreatedAt), ExpiresAt: stamp.OfPtr(l.ExpiresAt), RevokedAt: stamp.OfPtr(l.RevokedAt),
		LastOpenedAt: stamp.OfPtr(l.LastOpenedAt), Active: l.Active(now) && len(gone) == 0, ReportDeleted: len(gone) > 0}
}

// apiShareLinkNow is l as the API answers it alone (revoked).
func (h *Handlers) apiShareLinkNow(c echo.Context, l models.ShareLink) (APIShareLink, error) {
	ctx, wsID := c.Request().Context(), h.workspaceID(c)
	t, err := h.shareTargetsOf(ctx, wsID, []models.ShareLink{l})
	if err != nil {
		return APIShareLink{}, err
	}
	members, err := h.DB.MemberIDs(ctx, wsID)
	if err != nil {
		return APIShareLink{}, err
	}
	return apiShareLink(l, time.Now(), t.missing(l), members), nil
}

// APINewShareLink asks for a link to a run, an experiment or a comparison.
type APINewShareLink struct {
	Kind         string `json:"kind"`
	RunID        int64  `json:"run_id"`
	OtherRunID   int64  `json:"other_run_id"`
	ExperimentID int64  `json:"experiment_id"`
	Label        string `json:"label"`
	// ExpiresInDays: absent = apiDefaultShareDays; 0 = until revoked.
	ExpiresInDays *int `json:"expires_in_days"`
}

// apiListShares lists the workspace's links, oldest first, paginated: the
// page's links and one more (is there a next page?) are read in the
// database, and the names of what those links open only, not every link
// of the workspace and every name they use (TestAPISharesReadItsPage).
func (h *Handlers) apiListShares(c echo.Context) error {
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	ctx, wsID := c.Request().Context(), h.workspaceID(c)
	links, err := h.DB.ListShareLinksPage(ctx, wsID, models.ShareLinkPage{Oldest: true, After: after, Limit: limit + 1})
	if err != nil {
		return err
	}
	page := Page[APIShareLink]{Items: make([]APIShareLink, 0, min(len(links), limit))}
	if len(links) > limit {
		links = links[:limit]
		page.NextCursor = strconv.FormatInt(links[limit-1].ID, 10)
	}
	t, err := h.shareTargetsOf(ctx, wsID, links)
	if err != nil {
		return err
	}
	members, err := h.DB.MemberIDs(ctx, wsID)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, l := range links {
		page.Items = append(page.Items, apiShareLink(l, now, t.missing(l), members))
	}
	return c.JSON(http.StatusOK, page)
}

// apiCreateShare makes a link with the page's rules and returns it with its
// address, this once.
func (h *Handlers) apiCreateShare(c echo.Context) error {
	var in APINewShareLink
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	days := apiDefaultShareDays
	if in.ExpiresInDays != nil {
		days = *in.ExpiresInDays
	}
	if days < 0 || days > apiMaxShareDays {
		return models.Errorf(models.EInvalid, "expires_in_days must be from 1 to %d, or 0 for a link that lasts until revoked", apiMaxShareDays)
	}
	if err := in.check(); err != nil {
		return err
	}
	p := principalOf(c.Request().Context())
	n := models.NewShareLink{WorkspaceID: p.Workspace.ID, Kind: models.ShareKind(in.Kind), RunID: in.RunID,
		OtherRunID: in.OtherRunID, ExperimentID: in.ExperimentID, Label: in.Label,
		TTL: time.Duration(days) * 24 * time.Hour, CreatedBy: p.userID(), CreatedByName: p.ActorLabel()}
	if p.Kind == Account || p.Kind == Token {
		n.CreatedByName = p.User.Name
	}
	link, token, err := h.makeShare(c, n)
	if err != nil {
		return err
	}
	// Its reports were found when it was made (CreateShareLink).
	// Its maker is the caller: a member (or no account, in local mode).
	out := apiShareLink(link, time.Now(), nil, nil)
	out.CreatedByLeft = false
	out.URL = absoluteURL(c, shareBase(token))
	// The answer holds the only copy of the link.
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, out)
}

// check refuses a link whose kind is unknown or lacks the ids it opens, or
// names ids it does not use, naming the field: a link to a run without
// run_id was "run 0 does not exist" (404), and an experiment's link
// silently dropped a run_id.
func (in APINewShareLink) check() error {
	ids := map[string]int64{"run_id": in.RunID, "other_run_id": in.OtherRunID, "experiment_id": in.ExperimentID}
	var needs []string
	switch models.ShareKind(in.Kind) {
	case models.ShareRun:
		needs = []string{"run_id"}
	case models.ShareExperiment:
		needs = []string{"experiment_id"}
	case models.ShareCompare:
		needs = []string{"run_id", "other_run_id"}
	default:
		return models.Errorf(models.EInvalid, "kind %q cannot be shared: use run (with run_id), experiment (with experiment_id) or compare (with run_id and other_run_id)", in.Kind)
	}
	for _, f := range needs {
		if ids[f] < 0 {
			return models.Errorf(models.EInvalid, "%s %d is not an id: ids are positive whole numbers (the number in the report's address, /runs/<id> or /experiments/<id>)", f, ids[f])
		}
		if ids[f] == 0 {
			return models.Errorf(models.EInvalid, "a link of kind %q needs %s: give the id of what it opens", in.Kind, strings.Join(needs, " and "))
		}
		delete(ids, f)
	}
	for _, f := range []string{"run_id", "other_run_id", "experiment_id"} {
		if v, ok := ids[f]; ok && v != 0 {
			return models.Errorf(models.EInvalid, "a link of kind %q does not use %s: leave it out (it takes %s)", in.Kind, f, strings.Join(needs, " and "))
		}
	}
	return nil
}

// apiRevokeShare stops a link at once. Revoking a link already revoked
// answers it as it is (200), so a script that retries a revoke whose
// answer it lost does not read a 404 as "no such link".
func (h *Handlers) apiRevokeShare(c echo.Context) error {
	link, err := h.revokeShareByID(c)
	if models.ErrorCode(err) == models.ENotFound {
		if id, perr := paramID(c, "id"); perr == nil {
			if l, ferr := h.DB.FindShareLink(c.Request().Context(), h.workspaceID(c), id); ferr == nil && l.RevokedAt != nil {
				link, err = l, nil
			}
		}
	}
	if models.ErrorCode(err) == models.ENotFound {
		// The store's message allows for a link already revoked, which
		// the API answers as it is (above): here the link is not there.
		if id, perr := paramID(c, "id"); perr == nil {
			return models.Errorf(models.ENotFound, "share link %d does not exist (or is not in this workspace)", id)
		}
	}
	if err != nil {
		return err
	}
	out, err := h.apiShareLinkNow(c, link)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
