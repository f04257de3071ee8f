package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// The account object of the API (GET and PATCH /api/v1/account): who the
// caller is, where the token works and with which role, what it may do,
// and the workspaces its person belongs to. A script asks it before
// anything else ("whose token is this, and may it launch?"), and renames
// its person with the same rules as the account page (models.RenameUser).

// renameSelfAccess is the rule of PATCH /api/v1/account: a token that
// writes. A token acts with its person's role in its workspace, and a
// read-only token (scope "read") as a viewer whatever the role, so a
// viewer's token and every read-only token read and never write, their
// person's name included (a viewer renames on the account page, signed
// in). A full token of an editor or owner writes, and may rename.
const renameSelfAccess = Editor

// accountPermissions are the permissions an account answer lists, each
// with the route rule it stands for, from least to most. "rename_self"
// is the rule of PATCH /api/v1/account (renameSelfAccess), so the list
// cannot disagree with the route table.
var accountPermissions = []struct {
	Name   string
	Access Access
}{
	{"read", Viewer},
	{"rate", Reviewer},
	{"write", Editor},
	{"rename_self", renameSelfAccess},
	{"manage", Owner},
}

// permissionsOf names what a principal of role may do through the API.
func permissionsOf(role models.Role) []string {
	out := []string{}
	for _, p := range accountPermissions {
		if role.AtLeast(p.Access.role()) {
			out = append(out, p.Name)
		}
	}
	return out
}

// APIAccount is the caller as the API answers it.
type APIAccount struct {
	// Mode is "account" for a token's person, "local" for the local user
	// of a loopback server with no accounts (User and Token are then null).
	Mode string `json:"mode"`
	// User is the token's person; never another member's data.
	User *APIAccountUser `json:"user"`
	// Workspace is the token's workspace (the default one in local mode),
	// Role the person's role there now (a read-only token's permissions
	// are a viewer's all the same).
	Workspace APIWorkspaceRef `json:"workspace"`
	Role      string          `json:"role"`
	// Permissions name what this caller may do here (accountPermissions).
	Permissions []string `json:"permissions"`
	// Token is the token of this request (never the token itself).
	Token *APIToken `json:"token"`
	// Workspaces are every workspace the person belongs to, oldest
	// membership first, with their role in each.
	Workspaces []APIAccountWorkspace `json:"workspaces"`
}

// APIAccountUser is the caller's own account.
type APIAccountUser struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// APIWorkspaceRef names a workspace.
type APIWorkspaceRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// APIAccountWorkspace is one workspace of the caller's person.
type APIAccountWorkspace struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
	// Current is true for the token's workspace.
	Current bool `json:"current"`
}

// apiGetAccount answers who the caller is.
func (h *Handlers) apiGetAccount(c echo.Context) error {
	p := principalOf(c.Request().Context())
	a, err := h.apiAccountOf(c, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

// apiAccountOf builds the account answer of principal p (a token's person,
// or the local user). The workspaces are read now, so a membership that
// changed since the request began shows as it is.
func (h *Handlers) apiAccountOf(c echo.Context, p Principal) (APIAccount, error) {
	a := APIAccount{Workspace: APIWorkspaceRef{ID: p.Workspace.ID, Name: p.Workspace.Name}, Role: string(p.Role),
		Permissions: permissionsOf(p.Role), Workspaces: []APIAccountWorkspace{}}
	wss := p.Workspaces
	switch p.Kind {
	case Token:
		a.Mode = "account"
		a.User = &APIAccountUser{ID: p.User.ID, Email: p.User.Email, Name: p.User.Name}
		t := apiToken(p.APIToken, p.User.Name, p.TokenID)
		a.Token = &t
		var err error
		if wss, err = h.DB.ListUserWorkspaces(c.Request().Context(), p.User.ID); err != nil {
			return a, err
		}
		// The person's role, which a read-only token's answer names too
		// (its permissions are a viewer's: p.Role).
		for _, w := range wss {
			if w.Workspace.ID == p.Workspace.ID {
				a.Role = string(w.Role)
			}
		}
	case LocalUser:
		a.Mode = "local"
	default:
		// require lets no other principal through to the API's routes.
		return a, models.Errorf(models.EUnauthorized, "the API takes a personal access token: Authorization: Bearer <token>")
	}
	for _, w := range wss {
		a.Workspaces = append(a.Workspaces, APIAccountWorkspace{ID: w.Workspace.ID, Name: w.Workspace.Name, Role: string(w.Role),
			Current: w.Workspace.ID == p.Workspace.ID})
	}
	return a, nil
}

// APIAccountChange is the body of PATCH /api/v1/account: the fields a
// person may change of their own account (only the display name).
type APIAccountChange struct {
	// Name is the new display name. It is the only field, so a body
	// without it is refused rather than answered as a change.
	Name *string `json:"name"`
}

// apiChangeAccount changes the token's person's own display name through
// models.RenameUser, the one implementation the account page calls too:
// the same rules (1 to 200 characters, one line, no control character),
// the same audit in every workspace of the account, the same move of the
// human ratings version of the runs the person rated. A refused name
// answers 422 naming the field, and nothing is written.
func (h *Handlers) apiChangeAccount(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	if p.Kind != Token {
		// The local user has no account, as on the account page.
		return errNoAccount
	}
	var in APIAccountChange
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return models.Errorf(models.EInvalid, `"name" is missing: send the new display name, {"name": "Ada Lovelace"} (1 to %d characters, one line)`, models.MaxNameLength)
	}
	r, err := h.DB.RenameUser(ctx, p.User.ID, *in.Name, models.AuditEvent{ActorUserID: p.userID(), Actor: p.ActorLabel(), Address: c.RealIP()})
	if models.ErrorCode(err) == models.EInvalid {
		return models.Errorf(models.EInvalid, "%s: %s", strconv.Quote("name"), models.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	p.User = r.User
	a, err := h.apiAccountOf(c, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}
