// Package handlers is the HTTP layer: Echo handlers that parse requests,
// call the models and the runner, and render web pages. Every route is
// listed in routes.go; errors are returned and turned into pages by one
// error handler.
package handlers

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// Handlers holds the dependencies of every route.
type Handlers struct {
	DB     *models.DB
	Runner *runner.Runner
	Log    *slog.Logger
	// DefaultWorkspace is the workspace of the local user (a loopback
	// server with no accounts). Handlers never use it directly: they read
	// the request's workspace through workspaceID(c) or workspaceOf(ctx).
	DefaultWorkspace models.Workspace
	// Sessions is the session manager (database store).
	Sessions *scs.SessionManager
	// LocalMode is set when the server binds a loopback address: with no
	// account yet, requests then act as the local user (owner of the
	// default workspace) without signing in.
	LocalMode bool
	// SecureCookies marks every cookie (the session's, flash, theme...)
	// Secure on plain-HTTP requests too: set it when TLS ends at a proxy
	// in front of the server (secureRequest).
	SecureCookies bool
	// SimulatedURL is the in-process simulated judge's base URL.
	SimulatedURL string
	// MaxUploadBytes caps dataset uploads.
	MaxUploadBytes int64
	// MaxUploadRows caps the rows of an upload; 0 takes
	// dataimport.DefaultMaxRows.
	MaxUploadRows int
	// UploadQuotaBytes caps a workspace's uploads waiting for their column
	// mapping; 0 means no quota.
	UploadQuotaBytes int64
	// Prices are the configured per-model prices (USD per million tokens).
	Prices map[string]Price
	// Network says which host names are answered and which proxies are
	// trusted (see hosts.go).
	Network NetworkPolicy
	// Mail, when the operator configured SMTP, mails invite, reset and
	// address confirmation links (mail.go); nil: the server sends no mail
	// and people hand links over.
	Mail mail.Sender
	// MailBaseURL is the dashboard's address every mailed link starts with
	// ("https://batcheval.example.com", the operator's BATCHEVAL_BASE_URL):
	// a mail's link must never take the Host a request named, since anyone
	// can ask for a reset or confirmation link to be mailed to someone
	// else. "" takes the address the page was asked at (local mode, tests).
	MailBaseURL string
	// MetricsToken, when set, is the bearer token /metrics asks for; when
	// empty, /metrics answers only requests from this machine (metrics.go).
	MetricsToken string
	// Ready reports whether the process can serve (database reachable...).
	Ready func(ctx context.Context) error
	// PageConcurrency is how many pages render at once, the rest waiting
	// their turn in arrival order (admission.go); 0 takes
	// DefaultPageConcurrency, a negative value admits every request at once.
	PageConcurrency int
	// APIRateLimit is how many API requests one token may send a minute,
	// APILaunchRateLimit how many runs and experiments it may launch a
	// minute (api_ratelimit.go); 0: no limit. New sets the defaults.
	APIRateLimit       int
	APILaunchRateLimit int
	// rateClock, when set, is the time the rate limits count requests at
	// in place of the database's clock (tests).
	rateClock func() time.Time

	// streams counts the progress streams open per token and per account
	// (run_events.go).
	streams   openStreams
	reports   *reportCache
	pages     *pageGate
	haveUsers atomic.Bool
	// matchLiveSamples, when above 0, replaces matchLiveSamples (tests).
	matchLiveSamples int
	// liveMaxSamples, when above 0, replaces liveFiguresMaxSamples
	// (tests).
	liveMaxSamples int
	// pairLiveSamples, when above 0, replaces pairLiveSamples (tests).
	pairLiveSamples int
	// heldOutLease, when above 0, replaces defaultHeldOutLease (tests).
	heldOutLease time.Duration
	// heldOutInline is the largest held-out part launched in the request:
	// heldOutInlineSamples, set by New; tests lower it.
	heldOutInline int
	// progressPoll and accessRecheck, when above 0, replace the progress
	// stream's defaultProgressPoll and defaultAccessRecheck (tests).
	progressPoll, accessRecheck time.Duration
	// live shares running runs' figures among their viewers
	// (live_figures.go).
	live liveFigures
	// signInAudits counts the failed sign-ins whose audit entries are
	// being written in the background (auditFailedSignIn).
	signInAudits sync.WaitGroup
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input, Output float64
}

// New checks the dependencies and returns the handlers.
func New(db *models.DB, r *runner.Runner, log *slog.Logger, ws models.Workspace) (*Handlers, error) {
	if db == nil || r == nil {
		return nil, errors.New("handlers need a database and a runner")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handlers{DB: db, Runner: r, Log: log, DefaultWorkspace: ws, Sessions: newSessionManager(db), MaxUploadBytes: 50 << 20, UploadQuotaBytes: 200 << 20, Prices: map[string]Price{}, reports: newReportCache(),
		APIRateLimit: DefaultAPIRateLimit, APILaunchRateLimit: DefaultAPILaunchRateLimit, heldOutInline: heldOutInlineSamples}, nil
}

// render writes a templ component with a status, buffered so a render
// error becomes a proper error page rather than half a page.
// renderStatusKey, set in a request's context, is the status render
// answers a page with instead of 200.
const renderStatusKey = "render-status"

func render(c echo.Context, status int, comp templ.Component) error {
	if s, ok := c.Get(renderStatusKey).(int); ok && status == http.StatusOK {
		// A page shown again for a refused form (reviewRefused).
		status = s
	}
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// fragmentHeader marks an answer that is a page fragment for a script to
// paste (static/app.js): the script pastes nothing else, so an error page,
// a sign-in page or a proxy's page never lands inside another page.
const fragmentHeader = "X-Batcheval-Fragment"

// renderFragment renders a fragment a script pastes into a page (a live
// preview), marked with fragmentHeader.
func renderFragment(c echo.Context, comp templ.Component) error {
	c.Response().Header().Set(fragmentHeader, "1")
	return render(c, http.StatusOK, comp)
}

// fragmentErrorsKey marks a request whose refusals are answered as a
// fragment (fragmentErrors).
const fragmentErrorsKey = "fragment-errors"

// fragmentErrors makes the handler's refusals (4xx but 401, which sends
// to the sign-in page) answer the error's message as a marked fragment
// (web.FragmentRefused) instead of an error page, so the live preview
// that asked shows the server's own words ("rubric_id is missing", the
// field a 422 names). Set by the preview handlers themselves: a refusal
// before them (a role, a session, a proxy) stays unmarked, and the
// script says its generic sentence.
func fragmentErrors(c echo.Context) {
	c.Set(fragmentErrorsKey, true)
}

// flash cookie: a one-off message for the page after a redirect.
const flashCookie = "batcheval_flash"

func setFlash(c echo.Context, kind, text string) {
	setFlashDetail(c, kind, text, "")
}

// setFlashDetail is setFlash with a block of text shown under the message
// as written, line breaks kept (web.Flash.Detail): a judge's answer. It
// travels base64-encoded after a second colon; a flash without one is
// kind:text as before.
func setFlashDetail(c echo.Context, kind, text, detail string) {
	v := kind + ":" + base64.RawURLEncoding.EncodeToString([]byte(text))
	if detail != "" {
		v += ":" + base64.RawURLEncoding.EncodeToString([]byte(detail))
	}
	setCookie(c, &http.Cookie{Name: flashCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, MaxAge: 60})
}

// popFlash reads and clears the flash message. A person whose session's
// workspace is no longer theirs (Principal.Left) is told so first, on the
// page itself.
func popFlash(c echo.Context) *web.Flash {
	if p := principalOf(c.Request().Context()); p.Left != "" {
		return &web.Flash{Kind: "error", Text: leftWorkspaceText(p, false)}
	}
	if t, ok := c.Get(reviewTypedKey).(*reviewTyped); ok {
		// A page shown again for a refused review says why on top, as a
		// redirect's message would, also when its form is of another
		// sample than the one the review was of.
		return &web.Flash{Kind: "error", Text: t.problem}
	}
	ck, err := c.Cookie(flashCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	setCookie(c, &http.Cookie{Name: flashCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		MaxAge: -1, Expires: time.Unix(0, 0)})
	kind, quoted, ok := bytes.Cut([]byte(ck.Value), []byte(":"))
	if !ok {
		return nil
	}
	quoted, detailPart, _ := bytes.Cut(quoted, []byte(":"))
	text, err := base64.RawURLEncoding.DecodeString(string(quoted))
	if err != nil {
		return nil
	}
	detail, err := base64.RawURLEncoding.DecodeString(string(detailPart))
	if err != nil {
		detail = nil
	}
	return &web.Flash{Kind: string(kind), Text: string(text), Detail: string(detail)}
}

// page builds the layout data of a page.
func page(c echo.Context, title string) web.Page {
	return web.Page{Title: title, Flash: popFlash(c), Nav: navFor(principalOf(c.Request().Context())),
		Theme: themeOf(c), Path: pagePath(c)}
}

// pagePath is the address of the page being rendered, where the theme
// toggle returns. A page rendered in answer to a form post (a link shown
// once, a form shown again with its error) has an address that answers
// only POST, so it is the page the form was on, as the browser's Referer
// of this site says (Referrer-Policy: same-origin sends it), else home.
func pagePath(c echo.Context) string {
	req := c.Request()
	if req.Method == http.MethodGet {
		return req.URL.RequestURI()
	}
	if ref, err := url.Parse(req.Referer()); err == nil && ref.Host == req.Host && ref.Path != "" {
		return localPath(ref.RequestURI())
	}
	return "/"
}

// redirect answers a successful form post (303 so the browser GETs).
func redirect(c echo.Context, to, flashText string) error {
	if flashText != "" {
		setFlash(c, "ok", flashText)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// paramID reads a numeric path parameter.
func paramID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, models.Errorf(models.ENotFound, "%s is not a valid id", web.Quoted(c.Param(name)))
	}
	return id, nil
}

// ErrorHandler turns an error into a status, a log line and a page (or
// JSON for API-style requests).
func (h *Handlers) ErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	msg := models.ErrorMessage(err)
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		status = he.Code
		if m, ok := unroutedMessage(c, err); ok {
			msg = m
		} else if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(status)
		}
	default:
		switch models.ErrorCode(err) {
		case models.ENotFound:
			status = http.StatusNotFound
		case models.EInvalid:
			status = http.StatusUnprocessableEntity
		case models.EConflict:
			status = http.StatusConflict
		case models.EChanged:
			status = http.StatusPreconditionFailed
		case models.EUnauthorized:
			status = http.StatusUnauthorized
		}
	}
	if status == http.StatusNotFound && !wantsJSON(c.Request()) {
		// A page or form of a workspace its sender was removed from,
		// asked for while working in another: say so (removalRefusal).
		if rerr := h.removalRefusal(c); rerr != nil {
			if errors.As(rerr, &he) {
				err, status, msg = rerr, he.Code, he.Message.(string)
			} else {
				h.Log.Error("read a removal from a workspace", "path", c.Request().URL.Path, "err", rerr)
			}
		}
	}
	if status >= 500 {
		args := []any{"method", c.Request().Method, "path", c.Request().URL.Path, "err", err}
		if me := (*models.Error)(nil); errors.As(err, &me) && me.Message != "" && me.Err != nil {
			// The person reads the message; the operator needs the cause
			// too (an audit entry refused by the database).
			args = append(args, "cause", me.Err)
		}
		h.Log.Error("request failed", args...)
	}
	if status == http.StatusUnauthorized && isAPIPath(c.Request().URL.Path) {
		// RFC 6750: say which scheme the API takes.
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="batcheval"`)
	}
	if wantsJSON(c.Request()) {
		_ = c.JSON(status, APIError{Error: APIErrorBody{Code: errorCodeFor(status, err), Message: msg}})
		return
	}
	if marked, _ := c.Get(fragmentErrorsKey).(bool); marked && status >= 400 && status < 500 && status != http.StatusUnauthorized {
		c.Response().Header().Set(fragmentHeader, "1")
		_ = render(c, status, web.FragmentRefused(msg))
		return
	}
	if v, ok := reviewRefused(c, err, msg); ok {
		_ = render(c, status, web.ReviewRefusedPage(v))
		return
	}
	_ = render(c, status, web.ErrorPage(errorPage(c, status), status, msg))
}

// unroutedMessage says what to do at an address no route answers, or that
// answers other methods, where Echo's own messages were the bare "Not
// Found" and "Method Not Allowed": a mistyped or outdated address, or a
// button's address opened (or reloaded) as a page.
func unroutedMessage(c echo.Context, err error) (string, bool) {
	r := c.Request()
	api := isAPIPath(r.URL.Path)
	switch {
	case errors.Is(err, echo.ErrNotFound):
		if api {
			return fmt.Sprintf("there is no endpoint at %s %s: the API's endpoints are listed in /api/v1/openapi.json", r.Method, r.URL.Path), true
		}
		return "There is no page at this address: check it for a typo, or start again from the projects.", true
	case errors.Is(err, echo.ErrMethodNotAllowed):
		allow := methodsAllowed(c.Response().Header().Get(echo.HeaderAllow))
		if api {
			return fmt.Sprintf("%s %s is not an endpoint: this address takes %s (see /api/v1/openapi.json)", r.Method, r.URL.Path, allow), true
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return "This address is a button's, not a page: it is sent by a form's button (" + allow + "), so opening or reloading it does nothing. Go back to the page and use its button.", true
		}
		return fmt.Sprintf("This address does not take %s, only %s.", r.Method, allow), true
	}
	return "", false
}

// methodsAllowed lists an Allow header's methods without OPTIONS, which
// every route answers: "POST", or "GET or POST".
func methodsAllowed(header string) string {
	var ms []string
	for _, m := range strings.Split(header, ",") {
		if m = strings.TrimSpace(m); m != "" && m != http.MethodOptions {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return "other methods"
	}
	return strings.Join(ms, " or ")
}

// errorPage is the layout of an error page: a signed-in person (or the
// local user) keeps the header, with their account, Sign out and the
// workspace switcher, and their colour theme, so a refusal is not a dead
// end. A share link's visitor and an anonymous one get no navigation:
// share pages link nowhere outside their link.
func errorPage(c echo.Context, status int) web.Page {
	p := web.Page{Title: http.StatusText(status), Theme: themeOf(c), Path: pagePath(c)}
	if pr := principalOf(c.Request().Context()); pr.Kind == Account || pr.Kind == LocalUser {
		p.Nav = navFor(pr)
	}
	return p
}

// APIError is the one shape of every error answered as JSON (under /api/,
// or when the client asks for JSON).
type APIError struct {
	Error APIErrorBody `json:"error"`
}

// APIErrorBody is a machine-readable code and a message for people.
type APIErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// wantsJSON: API paths always answer JSON; other paths when asked to.
func wantsJSON(r *http.Request) bool {
	return isAPIPath(r.URL.Path) || strings.Contains(r.Header.Get("Accept"), "application/json")
}

// errorCodeFor names an error for machines: the model's code when it has
// one, otherwise one derived from the status.
func errorCodeFor(status int, err error) string {
	var me *models.Error
	if errors.As(err, &me) && me.Code != "" {
		return me.Code
	}
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return models.EUnauthorized
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return models.ENotFound
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return models.EConflict
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusUnprocessableEntity:
		return models.EInvalid
	case http.StatusTooManyRequests:
		return "rate_limited"
	}
	if status >= 500 {
		return models.EInternal
	}
	return "error"
}
