package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Access is the rule a route declares: who may call it. Every route in
// routes.go has one; the route-matrix test fails for a route without.
type Access int

// The rules, from open to strict. API tokens will be a new principal kind,
// not a new rule (a token acts with its owner's role); a share link has its
// own rule, Shared.
const (
	// Public: anyone, signed in or not (health, static files, sign-in,
	// first setup, the pages behind one-time links).
	Public Access = iota + 1
	// SignedIn: anyone with an account (or the local user), whatever their
	// role in the current workspace: sign out, switch workspace.
	SignedIn
	// Viewer reads the current workspace.
	Viewer
	// Reviewer also rates samples (saves, edits and withdraws their own
	// reviews): the rating routes' rule, and nothing else's.
	Reviewer
	// Editor creates and launches in the current workspace.
	Editor
	// Owner manages members, judges and keys of the current workspace.
	Owner
	// Shared: the route's :token must be an active share link; the request
	// then acts as that link (whatever session it carries), and the handler
	// shows only what the link shares (share.go).
	Shared
	// Scraper: the Prometheus scraper of /metrics, which covers every
	// workspace, so no session or API token opens it, an owner's included.
	// It takes the metrics token (Handlers.MetricsToken) as a bearer token
	// or, when none is set, a request from this machine (metrics.go).
	Scraper
)

// String names a rule for test failures and docs.
func (a Access) String() string {
	switch a {
	case Public:
		return "public"
	case SignedIn:
		return "signed-in"
	case Viewer:
		return "viewer"
	case Reviewer:
		return "reviewer"
	case Editor:
		return "editor"
	case Owner:
		return "owner"
	case Shared:
		return "share-link"
	case Scraper:
		return "metrics-scraper"
	}
	return "no rule"
}

// role is the least workspace role a rule asks for ("" when none).
func (a Access) role() models.Role {
	switch a {
	case Viewer:
		return models.RoleViewer
	case Reviewer:
		return models.RoleReviewer
	case Editor:
		return models.RoleEditor
	case Owner:
		return models.RoleOwner
	}
	return ""
}

// PrincipalKind says how a request is identified.
type PrincipalKind int

// Principal kinds.
const (
	Anonymous PrincipalKind = iota
	// LocalUser is the single user of a loopback server with no accounts:
	// owner of the default workspace, no sign-in needed.
	LocalUser
	// Account is a signed-in person.
	Account
	// Token is a person calling the JSON API with a personal access token:
	// their role in the token's workspace, read at each request.
	Token
	// ShareVisitor is whoever opened an active share link: it reads the
	// shared report of the link's workspace and nothing else.
	ShareVisitor
)

// Principal is who makes a request and in which workspace.
type Principal struct {
	Kind PrincipalKind
	// User is set for Account and Token.
	User models.User
	// TokenName names the access token of a Token principal (audit log).
	TokenName string
	// TokenID is that token's id (so a caller can tell its own token).
	TokenID int64
	// APIToken is that token as stored when the request began (its
	// expiry, creation and last use: GET /api/v1/account answers them).
	APIToken models.APIToken
	// Workspace is the current workspace (zero when the account belongs to
	// none); Role is the principal's role in it.
	Workspace models.Workspace
	Role      models.Role
	// PersonRole is, for a read-only token, its person's own role in
	// Workspace (Role is then viewer): a refusal names both limits.
	PersonRole models.Role
	// Workspaces lists every workspace the account belongs to (switcher).
	Workspaces []models.WorkspaceRole
	// Share is the link a ShareVisitor came through.
	Share *models.ShareLink
	// Left names the workspace the session had chosen when the account is
	// no longer a member of it (an owner removed it, through any server
	// process): the request then works in Workspace instead (or none), and
	// a form posted from a page of the workspace left is refused (require)
	// rather than answered "not found" from the other workspace.
	Left string
	// LeftBy is who removed them from Left, as the removal's record keeps
	// it (models.RemovalFrom; "" when not known: "an owner"); LeftSelf
	// when they removed themselves.
	LeftBy   string
	LeftSelf bool
}

// ActorLabel names the principal in the audit log.
func (p Principal) ActorLabel() string {
	switch p.Kind {
	case Account:
		return p.User.Name + " <" + p.User.Email + ">"
	case Token:
		return p.User.Name + " <" + p.User.Email + "> with API token " + strconv.Quote(p.TokenName)
	case LocalUser:
		return "local user"
	case ShareVisitor:
		return "share link"
	}
	return "anonymous"
}

func (p Principal) userID() *int64 {
	if p.Kind != Account && p.Kind != Token {
		return nil
	}
	id := p.User.ID
	return &id
}

type principalKey struct{}

// principalOf returns the request's principal (Anonymous when none).
func principalOf(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// workspaceOf is the current workspace of the request behind ctx; 0 (no
// workspace, so every scoped lookup finds nothing) when there is none.
func workspaceOf(ctx context.Context) int64 { return principalOf(ctx).Workspace.ID }

// workspaceID is the workspace of the request: always the session's (or
// the local user's), never a parameter.
func (h *Handlers) workspaceID(c echo.Context) int64 { return workspaceOf(c.Request().Context()) }

// Session keys.
const (
	sessUserID      = "user_id"
	sessEpoch       = "epoch"
	sessWorkspaceID = "workspace_id"
	// sessSeen is the session's last activity (Unix milliseconds), saved
	// at most every sessionTouch (touchSession).
	sessSeen = "seen"
	// sessInviteAnswered is the hash of the invite link this browser last
	// answered without signing in (answerInvite): the sign-in page it is
	// sent to shows the address answered with (inviteLoginEmail).
	sessInviteAnswered = "invite_answered"
)

// sessionLifetime: a working week; sessionIdle: a day away signs you out.
const sessionLifetime = 7 * 24 * time.Hour

// Variables so tests can shorten them.
var (
	sessionIdle = 24 * time.Hour
	// sessionTouch is how often a signed-in session's last activity is
	// saved: the idle limit is then exact to within this.
	sessionTouch = 5 * time.Minute
	// sessionNow is the clock a page's session activity is read on; a
	// test sets its own, so that idleness is what it says and not how
	// long the machine took between its pages.
	sessionNow = time.Now
)

// newSessionManager configures the session library on the database store.
func newSessionManager(db *models.DB) *scs.SessionManager {
	sm := scs.New()
	sm.Store = models.SessionStore{DB: db}
	sm.Lifetime = sessionLifetime
	// No sm.IdleTimeout: the library would then save the session on every
	// request to move its expiry, a write per page that on SQLite waits
	// behind run writes. touchSession keeps the idle limit instead.
	// The store keeps only a hash of each token (models.SessionStore), so
	// a copy of the sessions table holds no usable cookie. The library's
	// own hashing (HashTokenInStore) stays off: it would hash twice.
	sm.Cookie.Name = "batcheval_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Path = "/"
	sm.Cookie.Persist = true
	return sm
}

// secureRequest reports whether the cookies of the answer (every one the
// product sets or clears, the session's included) should be Secure: the
// request came over TLS, a trusted proxy says it did (X-Forwarded-Proto:
// c.Scheme() believes only the proxies in Network.TrustedProxies, and
// guardNetwork drops the header from anyone else), or the operator says
// TLS ends at a proxy in front (SecureCookies).
func (h *Handlers) secureRequest(c echo.Context) bool {
	return c.Request().TLS != nil || c.Scheme() == "https" || h.SecureCookies
}

// secureKey holds secureRequest's answer for the request (markSecure), so
// that setCookie, called from handlers without the Handlers, follows it.
const secureKey = "batcheval.secure"

// hsts is the Strict-Transport-Security of an answer sent over HTTPS: a
// year, OWASP's advice, for this host name only (a team's other hosts
// under the same domain are not this server's to decide).
const hsts = "max-age=31536000"

// markSecure records secureRequest for setCookie, and answers a secure
// request with Strict-Transport-Security, so a browser that has been here
// over HTTPS never again sends the session cookie's address in clear (a
// typed http:// address, a downgraded link). It runs after guardNetwork,
// which drops an untrusted peer's X-Forwarded-Proto. Browsers ignore the
// header on plain HTTP.
func (h *Handlers) markSecure(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		secure := h.secureRequest(c)
		c.Set(secureKey, secure)
		if secure {
			c.Response().Header().Set("Strict-Transport-Security", hsts)
		}
		return next(c)
	}
}

// setCookie sets or clears a cookie of this product, Secure by the one
// rule of secureRequest. Every cookie goes through here: a cookie set
// Secure and cleared without (or the other way) is not replaced by the
// browser, and a cookie left off Secure behind a TLS proxy travels in
// clear wherever plain HTTP reaches the server.
func setCookie(c echo.Context, ck *http.Cookie) {
	secure, ok := c.Get(secureKey).(bool)
	if !ok {
		// Not through markSecure (never in the router): the request alone.
		secure = c.Request().TLS != nil || c.Scheme() == "https"
	}
	ck.Secure = secure
	c.SetCookie(ck)
}

// loadSession loads the session named by the cookie and writes it back
// (with a cookie whose Secure flag follows the request) just before the
// response's headers go out. It does what the library's LoadAndSave does,
// as Echo middleware, so the Secure flag can depend on the request.
func (h *Handlers) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isAPIPath(c.Request().URL.Path) {
			// The API authenticates by token only (see identifyAPI).
			return next(c)
		}
		sm := h.Sessions
		req := c.Request()
		var token string
		if ck, err := req.Cookie(sm.Cookie.Name); err == nil {
			token = ck.Value
		}
		ctx, err := sm.Load(req.Context(), token)
		if err != nil {
			return err
		}
		if err := touchSession(sm, ctx, sessionNow()); err != nil {
			return err
		}
		c.SetRequest(req.WithContext(ctx))
		c.Response().Header().Add("Vary", "Cookie")
		c.Response().Before(func() {
			switch sm.Status(ctx) {
			case scs.Modified:
				tok, expiry, err := sm.Commit(ctx)
				if err != nil {
					h.Log.Error("save session", "err", err)
					return
				}
				h.writeSessionCookie(c, tok, expiry)
			case scs.Destroyed:
				h.writeSessionCookie(c, "", time.Time{})
			}
		})
		return next(c)
	}
}

// touchSession ends a signed-in session idle for longer than sessionIdle
// and records its activity, saving the session (a database write) only
// when the last record is sessionTouch old or more.
func touchSession(sm *scs.SessionManager, ctx context.Context, now time.Time) error {
	if !sm.Exists(ctx, sessUserID) {
		return nil
	}
	seen := time.UnixMilli(sm.GetInt64(ctx, sessSeen))
	idle := now.Sub(seen)
	switch {
	case sm.GetInt64(ctx, sessSeen) != 0 && idle > sessionIdle:
		return sm.Destroy(ctx)
	case idle >= sessionTouch:
		sm.Put(ctx, sessSeen, now.UnixMilli())
	}
	return nil
}

func (h *Handlers) writeSessionCookie(c echo.Context, token string, expiry time.Time) {
	ck := &http.Cookie{Name: h.Sessions.Cookie.Name, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode}
	if expiry.IsZero() {
		ck.Expires, ck.MaxAge = time.Unix(1, 0), -1
	} else {
		ck.Expires = expiry.Add(time.Second).UTC()
		ck.MaxAge = int(time.Until(expiry).Seconds() + 1)
	}
	setCookie(c, ck)
	c.Response().Header().Add("Cache-Control", `no-cache="Set-Cookie"`)
}

// usersExist reports whether any account exists. Once true it stays true
// for the process (accounts are not deleted), so it costs a query only
// while the server is still in single-user mode.
func (h *Handlers) usersExist(ctx context.Context) (bool, error) {
	if h.haveUsers.Load() {
		return true, nil
	}
	ok, err := h.DB.HasUsers(ctx)
	if ok {
		h.haveUsers.Store(true)
	}
	return ok, err
}

// identify works out the request's principal and puts it in the context.
func (h *Handlers) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		var (
			p   Principal
			err error
		)
		if isAPIPath(c.Request().URL.Path) {
			p, err = h.apiPrincipalFor(c)
		} else {
			p, err = h.principalFor(c)
		}
		if err != nil {
			return err
		}
		c.SetRequest(c.Request().WithContext(context.WithValue(ctx, principalKey{}, p)))
		return next(c)
	}
}

func (h *Handlers) principalFor(c echo.Context) (Principal, error) {
	ctx := c.Request().Context()
	sm := h.Sessions
	if uid := sm.GetInt64(ctx, sessUserID); uid != 0 {
		u, err := h.DB.FindUser(ctx, uid)
		if models.ErrorCode(err) == models.ENotFound || (err == nil && u.SessionEpoch != sm.GetInt64(ctx, sessEpoch)) {
			// The account is gone or its password changed since this
			// session signed in: sign the session out.
			return Principal{}, sm.Destroy(ctx)
		}
		if err != nil {
			return Principal{}, err
		}
		wss, err := h.DB.ListUserWorkspaces(ctx, u.ID)
		if err != nil {
			return Principal{}, err
		}
		p := Principal{Kind: Account, User: u, Workspaces: wss}
		want := sm.GetInt64(ctx, sessWorkspaceID)
		for _, w := range wss {
			if w.Workspace.ID == want {
				p.Workspace, p.Role = w.Workspace, w.Role
			}
		}
		if p.Workspace.ID == 0 && want != 0 {
			// The chosen workspace is no longer the account's: say which it
			// was, and move the session on, so that the next page's forms
			// work where the person now is.
			if p.Left, err = h.DB.WorkspaceName(ctx, want); err != nil {
				return Principal{}, err
			}
			sm.Remove(ctx, sessWorkspaceID)
		}
		if p.Workspace.ID == 0 && len(wss) > 0 {
			p.Workspace, p.Role = wss[0].Workspace, wss[0].Role
			sm.Put(ctx, sessWorkspaceID, p.Workspace.ID)
		}
		if p.Left != "" {
			// Who removed them, when the removal's record says. A later
			// request (another tab's form of that workspace) is told by
			// removalRefusal, from the same record.
			rm, err := h.DB.RemovalFrom(ctx, want, u.ID)
			if err != nil {
				return Principal{}, err
			}
			p.LeftBy, p.LeftSelf = rm.By, rm.Self
		}
		return p, nil
	}
	return h.localPrincipal(c)
}

// localPrincipal is the local user of a loopback server while no account
// exists (owner of the default workspace), and anonymous otherwise. A
// request a proxy relayed for someone elsewhere is anonymous too
// (NetworkPolicy.relayed): only a person at this machine is the local
// user.
func (h *Handlers) localPrincipal(c echo.Context) (Principal, error) {
	ctx := c.Request().Context()
	if !h.LocalMode || h.Network.relayed(c) {
		return Principal{}, nil
	}
	exist, err := h.usersExist(ctx)
	if err != nil || exist {
		return Principal{}, err
	}
	return Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner,
		Workspaces: []models.WorkspaceRole{{Workspace: h.DefaultWorkspace, Role: models.RoleOwner}}}, nil
}

// apiPrincipalFor identifies a request under /api/: a bearer token, or
// the local user of a loopback server with no accounts. Session cookies do
// not authenticate the API, so a web page cannot use a signed-in person's
// browser to call it (see crossOriginCheck for the local user).
func (h *Handlers) apiPrincipalFor(c echo.Context) (Principal, error) {
	ctx := c.Request().Context()
	if token, ok := bearerToken(c.Request()); ok {
		t, u, ws, role, err := h.DB.AuthenticateAPIToken(ctx, token)
		if err != nil {
			return Principal{}, err
		}
		if t.ExpiresAt != nil {
			// Every answer to an expiring token says when it stops, so a
			// script can warn its owner before it is refused.
			c.Response().Header().Set(TokenExpiresHeader, t.ExpiresAt.UTC().Format(time.RFC3339))
		}
		person := role
		if t.ReadOnly() && role.AtLeast(models.RoleViewer) {
			// A read-only token acts as a viewer, whatever its person's
			// role: every route's rule then refuses it what a viewer may
			// not do (require says why).
			role = models.RoleViewer
		}
		return Principal{Kind: Token, User: u, TokenName: t.Name, TokenID: t.ID, APIToken: t, Workspace: ws, Role: role, PersonRole: person,
			Workspaces: []models.WorkspaceRole{{Workspace: ws, Role: role}}}, nil
	}
	return h.localPrincipal(c)
}

// TokenExpiresHeader carries, on every API answer to a token that
// expires, when it stops working (RFC 3339, UTC).
const TokenExpiresHeader = "BatchEval-Token-Expires"

// apiPrefix is where the JSON API lives.
const apiPrefix = "/api/"

// isAPIPath reports whether a request path belongs to the JSON API.
func isAPIPath(path string) bool { return strings.HasPrefix(path, apiPrefix) }

// wrongSchemeRefusal answers an API call whose Authorization header is
// not a Bearer token: it says which part is wrong and how to write it.
const wrongSchemeRefusal = "The Authorization header was sent, but not as a Bearer token, so the API does not read it: " +
	"send the token as Authorization: Bearer <token> (the word Bearer, a space, then the token from the API tokens page)."

// bearerToken reads "Authorization: Bearer <token>"; ok is true whenever
// the header names the Bearer scheme, even with an empty token (which is
// then refused rather than treated as no credentials).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// errRoleTooWeak marks require's refusal of a member whose role is below
// the route's rule, so that a form's refusal page can keep what was sent
// (reviewRefused) and no other refusal (a cross-site request) does.
var errRoleTooWeak = errors.New("the member's role is below the route's rule")

// errLeftWorkspace marks require's refusal of a form sent from a page of
// the workspace its sender is no longer a member of (removed while the
// page was open, Principal.Left), so that the review's refusal page can
// keep what was typed (reviewRefused), as for errRoleTooWeak.
var errLeftWorkspace = errors.New("the sender is no longer a member of the page's workspace")

// require enforces a route's rule. Anonymous visitors of a page are sent
// to sign in; other callers get 401; a role too weak gets 403.
func (h *Handlers) require(a Access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if a.String() == "no rule" {
				// A route registered without a rule is closed to everyone
				// (the route-matrix test names it): failing open would let
				// any signed-in person, of any workspace, call it.
				return echo.NewHTTPError(http.StatusForbidden, "This address has no access rule yet, so nobody may use it.")
			}
			if a == Public {
				return next(c)
			}
			if a == Shared {
				return h.asShareVisitor(c, next)
			}
			if a == Scraper {
				return h.asScraper(c, next)
			}
			p := principalOf(c.Request().Context())
			if p.Kind == ShareVisitor {
				// Never set outside Shared routes; refuse should it leak.
				return echo.NewHTTPError(http.StatusForbidden, "A share link opens only its own report.")
			}
			if p.Kind == Anonymous {
				req := c.Request()
				if isAPIPath(req.URL.Path) {
					if strings.TrimSpace(req.Header.Get("Authorization")) != "" {
						// A token sent under another scheme ("token bev_…",
						// Basic, the bare token) is credentials the API does
						// not read: "Sign in first" sent its sender looking
						// for a sign-in. Never echo the header: it may be
						// the secret itself.
						return echo.NewHTTPError(http.StatusUnauthorized, wrongSchemeRefusal)
					}
					return echo.NewHTTPError(http.StatusUnauthorized, "Sign in first. The API takes a personal access token: Authorization: Bearer <token>.")
				}
				if req.Method == http.MethodGet && strings.Contains(req.Header.Get("Accept"), "text/html") {
					return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(req.URL.RequestURI()))
				}
				return echo.NewHTTPError(http.StatusUnauthorized, "Sign in first.")
			}
			if need := a.role(); need != "" {
				if p.Left == "" && (p.Workspace.ID == 0 || !p.Role.AtLeast(need)) {
					// Refused here for being in no workspace, or for a role
					// of the workspace they work in now: an address of a
					// workspace they were removed from says so instead.
					if err := h.removalRefusal(c); err != nil {
						return err
					}
				}
				if p.Left != "" && (p.Workspace.ID == 0 || !safeMethod(c.Request().Method)) {
					// "Nothing you sent was saved" only of a form: a page
					// asked for sent nothing.
					return echo.NewHTTPError(http.StatusForbidden, leftWorkspaceText(p, !safeMethod(c.Request().Method))).WithInternal(errLeftWorkspace)
				}
				if p.Workspace.ID == 0 {
					return echo.NewHTTPError(http.StatusForbidden, "You are not a member of any workspace yet: ask an owner of one for an invite, or create a workspace of your own on Your account.")
				}
				if !p.Role.AtLeast(need) && p.Kind == Token && p.APIToken.ReadOnly() {
					return echo.NewHTTPError(http.StatusForbidden, readOnlyTokenRefusal(p.PersonRole, need))
				}
				if !p.Role.AtLeast(need) {
					return echo.NewHTTPError(http.StatusForbidden, "Your role in this workspace ("+string(p.Role)+") does not allow this: it needs "+string(need)+".").WithInternal(errRoleTooWeak)
				}
			}
			return next(c)
		}
	}
}

// removalRefusal answers a request for a page or form of an object (a
// project, dataset, run, rubric, experiment or alignment, by the id in its
// address) of a workspace its signed-in sender was removed from and is
// not a member of again, though their session moved on before (removed
// while working in another workspace, or another tab told them first): a
// 403 saying which workspace, who removed them when known, and what to do
// (leftWorkspaceText), as the removal's record (models.WorkspaceRemoval,
// matched by account, whatever their address is now) keeps it, marked
// errLeftWorkspace so that a review's
// save keeps what was typed (reviewRefused). Where they were answered "not
// found" from the workspace they work in now, or refused for its role, and
// the typed text was lost. Nothing of the object is read or shown: only
// the workspace's name, which they knew. The principal in the request's
// context gets Left (the error page's navigation and the review refusal
// read it). nil when the address names no such object: the caller's own
// answer stands. Read only on a refusal or a "not found", never on a page
// served.
func (h *Handlers) removalRefusal(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	if p.Kind != Account || p.Left != "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(c.Path(), "/"), "/")
	if len(parts) < 2 || parts[1] != ":id" {
		return nil
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return nil
	}
	rm, ok, err := h.DB.RemovedFromWorkspaceOf(ctx, parts[0], id, p.User.ID)
	if err != nil || !ok {
		return err
	}
	p.Left, p.LeftBy, p.LeftSelf = rm.Workspace, rm.By, rm.Self
	c.SetRequest(c.Request().WithContext(context.WithValue(ctx, principalKey{}, p)))
	return echo.NewHTTPError(http.StatusForbidden, leftWorkspaceText(p, !safeMethod(c.Request().Method))).WithInternal(errLeftWorkspace)
}

// readOnlyTokenRefusal says why a read-only token is refused a route that
// needs role need, its person having role person: the token alone when a
// full-access token of the same person would do, and both limits when the
// person's role falls short too (a token with full access would still be
// refused, so pointing only at /tokens sent an editor in a circle).
func readOnlyTokenRefusal(person, need models.Role) string {
	if person.AtLeast(need) {
		return "This token is read-only, which does not allow this (it needs " + string(need) +
			" and a token with full access): make one on the API tokens page (/tokens)."
	}
	return "This token is read-only, and your role in this workspace (" + string(person) + ") does not allow this either: it needs " +
		string(need) + " and a token with full access. Ask an owner for the " + string(need) + " role, then make a token with full access on the API tokens page (/tokens)."
}

// auditOf is the audit entry of the request's action in the request's
// workspace, handed to the models write that does the action, which
// records it in its own transaction (models.Audit): the action and its
// entry are written together, or neither is and the person is told that
// nothing was changed. Who acted and from where are taken from the
// request here, in one place; describe says what was done, from what the
// write returns.
func auditOf[T any](c echo.Context, describe func(T) models.AuditNote) models.Audit[T] {
	p := principalOf(c.Request().Context())
	return auditAs(c, p.Workspace.ID, p, describe)
}

// auditAs is auditOf for an action in workspace wsID by p (an invite
// accepted is written in the invite's workspace, by the person joining).
func auditAs[T any](c echo.Context, wsID int64, p Principal, describe func(T) models.AuditNote) models.Audit[T] {
	return models.Audit[T]{Event: models.AuditEvent{WorkspaceID: wsID, ActorUserID: p.userID(), Actor: p.ActorLabel(), Address: c.RealIP()},
		Describe: describe}
}

// noted describes an action whose target and detail are known before the
// write (an invite revoked by its id).
func noted[T any](action, target, detail string) func(T) models.AuditNote {
	return func(T) models.AuditNote { return models.AuditNote{Action: action, Target: target, Detail: detail} }
}

// audit records an event in the request's workspace after the fact, for
// what no models write of this server does in a transaction of its own (a
// sign-in, a run cancelled through the runner). A failure to write the log
// is logged, not shown: the event itself has happened. An action that
// changes what is stored records its entry with it instead (auditOf).
func (h *Handlers) audit(c echo.Context, action, target, detail string) {
	p := principalOf(c.Request().Context())
	h.auditIn(c, p.Workspace.ID, p, action, target, detail)
}

func (h *Handlers) auditIn(c echo.Context, wsID int64, p Principal, action, target, detail string) {
	if wsID == 0 {
		return
	}
	err := h.DB.RecordAudit(c.Request().Context(), models.AuditEvent{WorkspaceID: wsID, ActorUserID: p.userID(),
		Actor: p.ActorLabel(), Action: action, Target: target, Detail: detail, Address: c.RealIP()})
	if err != nil {
		h.Log.Error("write audit log", "action", action, "err", err)
	}
}

// safeMethod reports whether an HTTP method only reads.
func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// leftWorkspaceText tells a person that they are no longer a member of the
// workspace their session had chosen, or whose page they asked for
// (p.Left), who removed them when known (p.LeftBy, else "an owner"), and
// where they work now; refused says that what they sent (a form of a page
// of that workspace) was not saved, else how to open its pages again.
func leftWorkspaceText(p Principal, refused bool) string {
	by := "an owner removed you"
	switch {
	case p.LeftSelf:
		by = "you removed yourself"
	case p.LeftBy != "":
		by = p.LeftBy + " removed you"
	}
	text := fmt.Sprintf("You are no longer a member of workspace %s: %s.", web.Quoted(p.Left), by)
	if refused {
		text += " Nothing you sent from its pages was saved."
	}
	if p.Workspace.ID != 0 {
		text += fmt.Sprintf(" You now work in workspace %s.", web.Quoted(p.Workspace.Name))
	} else {
		text += " Ask an owner of a workspace for an invite, or create a workspace of your own on Your account."
	}
	if !refused {
		// What to do to open its pages again (a link from a mail, a
		// bookmark). A refused form says nothing more here: the review's
		// refusal page says it below the message (reviewRefused).
		text += fmt.Sprintf(" To open the pages of workspace %s again, ask one of its owners to invite you again.", web.Quoted(p.Left))
	}
	return text
}
