package handlers

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/static"
)

// Register wires every route and the shared middleware onto e.
func (h *Handlers) Register(e *echo.Echo) {
	e.HTTPErrorHandler = h.ErrorHandler
	e.Pre(routeHeadAsGet)
	e.Use(restoreHead)
	e.Use(middleware.Recover())
	// The security headers go on first, so that every answer has them,
	// the refusals of the checks below included: a 403 for a cross-site
	// post or a 413 was a page of this site (its header's theme form
	// included) that any site could frame.
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection: "0", ContentTypeNosniff: "nosniff", XFrameOptions: "DENY",
		ContentSecurityPolicy: contentSecurityPolicy,
	}))
	e.Use(h.guardNetwork) // Host allowlist, trusted proxies, Referrer-Policy (hosts.go)
	e.Use(h.limitBodies)  // 1 MiB bodies except dataset uploads (limits.go)
	// Refuse cross-site form posts (CSRF): a session cookie, or being the
	// local user of a loopback server, would otherwise let any web page a
	// person visits launch paid runs through their browser. The standard
	// library's check reads Sec-Fetch-Site / Origin; crossOriginCheck adds
	// the Referer when a request has neither.
	e.Use(crossOriginCheck(http.NewCrossOriginProtection()))

	// Sessions, then who is asking; each route then checks its own rule.
	// markSecure first: every cookie's Secure flag follows one rule.
	e.Use(h.markSecure, h.loadSession, h.identify, keepPrivatePagesOffDisk)
	h.pages = newPageGate(pageConcurrencyOf(h.PageConcurrency))
	for _, r := range h.routes() {
		// Pages wait for their turn after the access check, so a request
		// that would be refused never holds a place (admission.go).
		// No part of the address, and after the access check no field,
		// may hold NUL or another control character (controlchars.go).
		// An API route refuses a query parameter its OpenAPI document
		// does not list (api_query.go), and a body of a media type the
		// document does not list for it (api_mediatype.go).
		handler := r.Handler
		if strings.HasPrefix(r.Path, "/api/") {
			handler = refuseUnknownQuery(r.Method, r.Path, refuseOtherMediaTypes(r.Method, r.Path, handler))
			// A token's requests and launches a minute (api_ratelimit.go).
			handler = h.limitAPIRate(r.Method, r.Path, handler)
		}
		e.Add(r.Method, r.Path, h.admitPages(r.Method, r.Path, handler), refuseControlsInAddress, h.require(r.Access), refuseControlCharacters)
	}
}

// keepPrivatePagesOffDisk asks browsers not to store what a signed-in
// person is shown (their workspace's datasets, judge answers, reports,
// members), nor the invitation and password-reset pages whose address is
// a secret: on a shared computer, a browser's disk cache would keep them
// after sign-out for the next person to read. The site's own files and the
// API (scripts, with ETags) keep their caching; a handler that says
// otherwise has the last word.
func keepPrivatePagesOffDisk(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		path := c.Request().URL.Path
		if !strings.HasPrefix(path, "/static/") && !isAPIPath(path) &&
			(principalOf(c.Request().Context()).Kind == Account || strings.HasPrefix(path, "/invites/") || strings.HasPrefix(path, "/reset/") || strings.HasPrefix(path, "/confirm/")) {
			c.Response().Header().Set(echo.HeaderCacheControl, "private, no-store")
		}
		return next(c)
	}
}

// contentSecurityPolicy: every script, style and image comes from this
// site (no inline script or style attribute on any page). default-src does
// not cover where the page may be framed, where its forms may post, what a
// <base> may point to or plugins, so those are said too: no site may frame
// a page (frame-ancestors, the successor of X-Frame-Options, which stays
// for older browsers: clickjacking of a launch or invite button), forms
// post only here (an injected form cannot send a password elsewhere), and
// no <base> or plugin.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"

// routeHeadAsGet and restoreHead answer HEAD as the GET of the same
// address, without the body (link checkers, chat apps unfurling a share
// link, monitors): the router only knows GET routes, and answered HEAD
// 405. The request is routed as a GET (Echo routes the request it was
// given, so its method is changed in place), then is HEAD again for the
// handler and the server, which drops the body written.
func routeHeadAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if req := c.Request(); req.Method == http.MethodHead {
			req.Method = http.MethodGet
			c.Set(headKey, true)
		}
		return next(c)
	}
}

const headKey = "batcheval.head"

func restoreHead(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if head, _ := c.Get(headKey).(bool); head {
			c.Request().Method = http.MethodHead
		}
		return next(c)
	}
}

// crossOriginCheck refuses cross-site writes carrying ambient credentials
// (a session cookie, or being the local user of a loopback server). An API
// request with a bearer token carries none: a browser cannot add that
// header to a cross-site request without a CORS preflight, which this
// server never grants, and the token itself is the proof of intent. So
// those are let through; everything else, the API's local-user requests
// included, keeps the same-origin check.
func crossOriginCheck(cop *http.CrossOriginProtection) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if _, ok := bearerToken(req); ok && isAPIPath(req.URL.Path) {
				return next(c)
			}
			if err := cop.Check(req); err != nil {
				return echo.NewHTTPError(http.StatusForbidden, "Cross-site request refused: "+err.Error()+".")
			}
			if crossSiteReferer(req) {
				return echo.NewHTTPError(http.StatusForbidden, "Cross-site request refused: the request came from a page of another site (its Referer).")
			}
			return next(c)
		}
	}
}

// crossSiteReferer reports whether a write that says nothing of its
// origin (no Sec-Fetch-Site, no Origin: the standard library's check lets
// it through, as from a client that is not a browser) names in its Referer
// a page of another host. Browsers send Origin with a form post today, but
// older ones and some privacy settings send only the Referer; a client
// that sends neither is let through, as before.
func crossSiteReferer(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if req.Header.Get("Sec-Fetch-Site") != "" || req.Header.Get("Origin") != "" {
		return false
	}
	ref := req.Header.Get("Referer")
	if ref == "" {
		return false
	}
	u, err := url.Parse(ref)
	if err != nil || u.Host == "" {
		return true // not a page of this server's
	}
	return !strings.EqualFold(u.Host, req.Host)
}

// route is one entry of the route table: the rule sits next to the
// registration, and a route outside this table fails the route-matrix
// test (routes_matrix_test.go).
type route struct {
	Method  string
	Path    string
	Handler echo.HandlerFunc
	Access  Access
}

// routes is every route of the dashboard with who may call it.
func (h *Handlers) routes() []route {
	const get, post, put, patch = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch
	return []route{
		{get, "/healthz", h.healthz, Public},
		{get, "/readyz", h.readyz, Public},
		{get, "/static/:name", serveStatic, Public},
		// The favicon under the name browsers ask for, and the colour
		// theme toggle (theme.go): public, the sign-in page has both.
		{get, "/favicon.ico", serveFavicon, Public},
		{post, "/theme", setTheme, Public},
		// Prometheus metrics of this process's runner and of the shared
		// database (runs by status, queue depth; judges by id, no names or
		// texts). They cover every workspace, so only the scraper reads
		// them: with the metrics token, or from this machine when none is
		// set (metrics.go, README "Observability").
		{get, "/metrics", h.metrics, Scraper},

		// Accounts (accounts.go).
		{get, "/login", h.showLogin, Public},
		{post, "/login", h.login, Public},
		// "Forgot password?" (forgot.go), with mail only.
		{get, "/forgot", h.showForgot, Public},
		{post, "/forgot", h.forgot, Public},
		{post, "/logout", h.logout, SignedIn},
		{get, "/setup", h.showSetup, Public},
		{post, "/setup", h.setup, Public},
		{get, "/invites/:token", h.showInvite, Public},
		{post, "/invites/:token", h.acceptInvite, Public},
		{get, "/reset/:token", h.showReset, Public},
		{post, "/reset/:token", h.resetPassword, Public},
		// Links mailed to confirm an address (mail.go).
		{get, "/confirm/:token", h.showConfirm, Public},
		{post, "/confirm/:token", h.confirm, Public},
		{post, "/account/confirm", h.requestConfirmation, SignedIn},
		{get, "/account", h.showAccount, SignedIn},
		// The person's own name, password and sessions (accounts.go); the local
		// user has neither and is refused.
		{post, "/account/password", h.changePassword, SignedIn},
		{post, "/account/name", h.changeName, SignedIn},
		{post, "/account/sessions", h.signOutOtherSessions, SignedIn},
		{post, "/account/workspace", h.switchWorkspace, SignedIn},
		{post, "/workspaces", h.createWorkspace, SignedIn},
		{get, "/members", h.showMembers, Owner},
		{post, "/members/invites", h.createInvite, Owner},
		{post, "/members/invites/:id/revoke", h.revokeInvite, Owner},
		{post, "/members/invites/:id/link", h.showInviteLink, Owner},
		{post, "/members/invites/:id/resend", h.resendInviteAnswers, Owner},
		{post, "/members/:id/role", h.changeRole, Owner},
		{post, "/members/:id/remove", h.removeMember, Owner},
		{post, "/members/:id/reset", h.issueReset, Owner},
		{post, "/members/:id/ratings", h.setRatingsExcluded, Owner},
		{get, "/audit", h.showAudit, Owner},

		// Projects, datasets, rubrics.
		{get, "/", h.listProjects, Viewer},
		{post, "/guide", h.setGuide, Viewer},
		// The list of projects is the home page's: /projects typed as an
		// address (or bookmarked) is sent there (showProjectsAddress).
		{get, "/projects", showProjectsAddress, Viewer},
		{post, "/projects", h.createProject, Editor},
		{get, "/projects/:id", h.showProject, Viewer},
		{get, "/projects/:id/datasets/new", h.showUploadForm, Editor},
		{post, "/projects/:id/datasets/upload", h.uploadDataset, Editor},
		{get, "/projects/:id/datasets/map", h.showMappingForm, Editor},
		{post, "/projects/:id/datasets/map", h.importDataset, Editor},
		{get, "/datasets/:id", h.showDataset, Viewer},
		{post, "/datasets/:id/main", h.markMainDataset, Editor},
		// Reviews in the browser (review.go): viewers read the queue;
		// reviewers, editors and owners rate (save, edit, withdraw); editors
		// and owners recompute a report with the ratings.
		{get, "/datasets/:id/review", h.showReviewQueue, Viewer},
		{post, "/datasets/:id/review", h.saveReview, Reviewer},
		{post, "/runs/:id/humans", h.recomputeHumans, Editor},
		{get, "/datasets/:id/export.csv", h.exportDatasetCSV, Viewer},
		{get, "/projects/:id/rubrics/new", h.newRubric, Editor},
		{post, "/projects/:id/rubrics", h.postNewRubric, Editor},
		// The edit page is also the only page that shows a rubric.
		{get, "/rubrics/:id/edit", h.editRubric, Viewer},
		{get, "/rubrics/:id", h.showRubric, Viewer},
		{post, "/rubrics/:id", h.postRubric, Editor},
		// The prompt preview writes nothing: viewers choose the dataset and
		// criterion it shows, over the rubric as stored (previewRubric).
		{post, "/rubrics/preview", h.previewRubric, Viewer},
		{post, "/projects/:id/rubrics/import", h.importRubric, Editor},
		{get, "/rubrics/:id/export", h.exportRubric, Viewer},

		// Judges hold keys and spend money: owners manage them; everyone
		// sees the list (keys are never shown).
		{get, "/judges", h.listJudges, Viewer},
		{get, "/judges/new", h.newJudge, Owner},
		{post, "/judges", h.createJudge, Owner},
		{get, "/judges/:id/edit", h.editJudge, Owner},
		{get, "/judges/:id", h.showJudge, Owner},
		{post, "/judges/:id", h.updateJudge, Owner},
		{post, "/judges/:id/test", h.testJudge, Owner},

		// Runs, experiments, comparisons.
		{get, "/projects/:id/runs/new", h.showLaunchForm, Editor},
		{post, "/projects/:id/runs", h.launchRun, Editor},
		{post, "/runs/estimate", h.estimateRun, Editor},
		{get, "/runs", h.listRuns, Viewer},
		{get, "/runs/:id", h.showRun, Viewer},
		{post, "/runs/:id/cancel", h.cancelRun, Editor},
		{post, "/runs/:id/resume", h.resumeRun, Editor},
		// Pause and Continue: who may cancel a run may pause it.
		{post, "/runs/:id/pause", h.pauseRun, Editor},
		{post, "/runs/:id/continue", h.continueRun, Editor},
		{get, "/runs/:id/events", h.streamRunEvents, Viewer},
		{get, "/runs/:id/samples/:rowID", h.showRunSample, Viewer},
		{get, "/runs/:id/batches", h.listRunBatches, Viewer},
		{get, "/runs/:id/batches/:batchID", h.showRunBatch, Viewer},
		{get, "/runs/:id/export.csv", h.exportRunCSV, Viewer},
		{get, "/runs/:id/export.json", h.exportRunJSON, Viewer},
		// Generating G-Eval steps calls the judge (it costs money).
		{post, "/projects/:id/runs/geval-steps", h.generateGEvalSteps, Editor},
		{post, "/projects/:id/experiments", h.launchAllMethods, Editor},
		{get, "/runs/:id/variants", h.showRunVariants, Viewer},
		{post, "/runs/:id/reseed", h.reseedRun, Editor},
		{post, "/runs/:id/noise", h.noiseRun, Editor},
		{post, "/runs/:id/reword", h.rewordRun, Editor},
		// Aligning the judge with the humans, and rubric versions (align.go).
		{get, "/runs/:id/align", h.showAlignStart, Viewer},
		{post, "/runs/:id/align", h.startAlignment, Editor},
		{get, "/alignments/:id", h.showAlignment, Viewer},
		{post, "/alignments/:id/accept", h.acceptAlignment, Editor},
		{post, "/alignments/:id/heldout", h.relaunchHeldOut, Editor},
		{get, "/rubrics/:id/versions", h.showRubricVersions, Viewer},
		{get, "/rubrics/:id/versions/:version", h.showRubricVersion, Viewer},
		{get, "/projects/:id/experiments", h.listExperiments, Viewer},
		{get, "/experiments/:id", h.showExperiment, Viewer},
		{get, "/compare", h.compareRuns, Viewer},
		{get, "/compare/sample", h.compareSample, Viewer},

		// Personal access tokens for the API (tokens.go): each person
		// manages their own, in the current workspace.
		{get, "/tokens", h.showTokens, Viewer},
		{post, "/tokens", h.createToken, Viewer},
		{post, "/tokens/:id/revoke", h.revokeToken, Viewer},

		// The JSON API (api.go): the same rules as the pages it mirrors.
		{get, "/api/v1/openapi.json", serveOpenAPI, Public},
		{get, "/api/v1/projects", h.apiListProjects, Viewer},
		{post, "/api/v1/projects", h.apiCreateProject, Editor},
		{get, "/api/v1/projects/:id", h.apiGetProject, Viewer},
		{get, "/api/v1/projects/:id/datasets", h.apiListDatasets, Viewer},
		{get, "/api/v1/projects/:id/rubrics", h.apiListRubrics, Viewer},
		{post, "/api/v1/projects/:id/uploads", h.apiUpload, Editor},
		{post, "/api/v1/projects/:id/datasets", h.apiCreateDataset, Editor},
		{get, "/api/v1/datasets/:id", h.apiGetDataset, Viewer},
		{get, "/api/v1/datasets/:id/reviews", h.apiListReviews, Viewer},
		{post, "/api/v1/datasets/:id/reviews", h.apiCreateReview, Reviewer},
		{post, "/api/v1/projects/:id/rubrics", h.apiCreateRubric, Editor},
		{get, "/api/v1/rubrics/:id", h.apiGetRubric, Viewer},
		{put, "/api/v1/rubrics/:id", h.apiUpdateRubric, Editor},
		{get, "/api/v1/judges", h.apiListJudges, Viewer},
		{post, "/api/v1/judges", h.apiCreateJudge, Owner},
		{get, "/api/v1/judges/:id", h.apiGetJudge, Viewer},
		{put, "/api/v1/judges/:id", h.apiUpdateJudge, Owner},
		{post, "/api/v1/projects/:id/runs", h.apiLaunchRun, Editor},
		{post, "/api/v1/projects/:id/experiments", h.apiLaunchExperiment, Editor},
		{get, "/api/v1/runs", h.apiListRuns, Viewer},
		// A run's endpoints say when the run is in the trash, and how to
		// restore it (api_trash.go), where they said it does not exist.
		{get, "/api/v1/runs/:id", h.apiRunInTrash(h.apiGetRun), Viewer},
		{post, "/api/v1/runs/:id/cancel", h.apiRunInTrash(h.apiCancelRun), Editor},
		{post, "/api/v1/runs/:id/pause", h.apiRunInTrash(h.apiPauseRun), Editor},
		{post, "/api/v1/runs/:id/continue", h.apiRunInTrash(h.apiContinueRun), Editor},
		{get, "/api/v1/runs/:id/events", h.apiRunInTrash(h.apiStreamRun), Viewer},
		{get, "/api/v1/runs/:id/results", h.apiRunInTrash(h.apiRunResults), Viewer},
		{get, "/api/v1/runs/:id/export.csv", h.apiRunInTrash(h.exportRunCSV), Viewer},
		{get, "/api/v1/runs/:id/export.json", h.apiRunInTrash(h.exportRunJSON), Viewer},
		{get, "/api/v1/experiments", h.apiListExperiments, Viewer},
		{get, "/api/v1/experiments/:id", h.apiGetExperiment, Viewer},
		{get, "/api/v1/compare", h.apiCompare, Viewer},
		// Share links and tokens through the API (api_shares.go, tokens.go):
		// the rules of the pages; an owner may revoke any member's token.
		{get, "/api/v1/shares", h.apiListShares, Editor},
		{post, "/api/v1/shares", h.apiCreateShare, Editor},
		{post, "/api/v1/shares/:id/revoke", h.apiRevokeShare, Editor},
		{get, "/api/v1/tokens", h.apiListTokens, Viewer},
		{post, "/api/v1/tokens/:id/revoke", h.apiRevokeToken, Viewer},
		// The caller's own account (api_account.go): any member's token
		// reads it; renaming needs a token that writes (renameSelfAccess).
		{get, "/api/v1/account", h.apiGetAccount, Viewer},
		{patch, "/api/v1/account", h.apiChangeAccount, renameSelfAccess},

		// Rename, archive, delete and the trash (lifecycle.go): editors
		// manage what they create; judges are the owners'. The delete page
		// asks first (and lists a dataset's runs); only owners purge.
		{post, "/projects/:id/rename", h.renameObject(models.KindProject), Editor},
		{post, "/projects/:id/archive", h.archiveObject(models.KindProject, true), Editor},
		{post, "/projects/:id/unarchive", h.archiveObject(models.KindProject, false), Editor},
		{get, "/projects/:id/delete", h.showDeleteObject(models.KindProject), Editor},
		{post, "/projects/:id/delete", h.deleteObject(models.KindProject), Editor},
		{post, "/datasets/:id/rename", h.renameObject(models.KindDataset), Editor},
		{post, "/datasets/:id/archive", h.archiveObject(models.KindDataset, true), Editor},
		{post, "/datasets/:id/unarchive", h.archiveObject(models.KindDataset, false), Editor},
		{get, "/datasets/:id/delete", h.showDeleteObject(models.KindDataset), Editor},
		{post, "/datasets/:id/delete", h.deleteObject(models.KindDataset), Editor},
		{post, "/rubrics/:id/rename", h.renameObject(models.KindRubric), Editor},
		{post, "/rubrics/:id/archive", h.archiveObject(models.KindRubric, true), Editor},
		{post, "/rubrics/:id/unarchive", h.archiveObject(models.KindRubric, false), Editor},
		{get, "/rubrics/:id/delete", h.showDeleteObject(models.KindRubric), Editor},
		{post, "/rubrics/:id/delete", h.deleteObject(models.KindRubric), Editor},
		{post, "/judges/:id/rename", h.renameObject(models.KindJudge), Owner},
		{post, "/judges/:id/archive", h.archiveObject(models.KindJudge, true), Owner},
		{post, "/judges/:id/unarchive", h.archiveObject(models.KindJudge, false), Owner},
		{get, "/judges/:id/delete", h.showDeleteObject(models.KindJudge), Owner},
		{post, "/judges/:id/delete", h.deleteObject(models.KindJudge), Owner},
		{post, "/runs/:id/rename", h.renameObject(models.KindRun), Editor},
		{post, "/runs/:id/archive", h.archiveObject(models.KindRun, true), Editor},
		{post, "/runs/:id/unarchive", h.archiveObject(models.KindRun, false), Editor},
		{get, "/runs/:id/delete", h.showDeleteObject(models.KindRun), Editor},
		{post, "/runs/:id/delete", h.deleteObject(models.KindRun), Editor},
		{post, "/experiments/:id/rename", h.renameObject(models.KindExperiment), Editor},
		{post, "/experiments/:id/archive", h.archiveObject(models.KindExperiment, true), Editor},
		{post, "/experiments/:id/unarchive", h.archiveObject(models.KindExperiment, false), Editor},
		{get, "/experiments/:id/delete", h.showDeleteObject(models.KindExperiment), Editor},
		{post, "/experiments/:id/delete", h.deleteObject(models.KindExperiment), Editor},
		{get, "/trash", h.showTrash, Viewer},
		// Restoring a judge also needs an owner: restoreTrash checks it.
		{post, "/trash/:id/restore", h.restoreTrash, Editor},
		{post, "/trash/:id/purge", h.purgeTrash, Owner},

		// Sharing (share.go, webhooks.go). A share link reads one report;
		// editors make and revoke links; owners set the webhook.
		{get, "/runs/:id/report.html", h.downloadRunReport, Viewer},
		{get, "/experiments/:id/report.html", h.downloadExperimentReport, Viewer},
		{get, "/shares", h.listShares, Editor},
		{post, "/shares", h.createShare, Editor},
		{post, "/shares/:id/revoke", h.revokeShare, Editor},
		{get, "/s/:token", h.showShared, Shared},
		{get, "/s/:token/samples/:rowID", h.showSharedSample, Shared},
		{get, "/s/:token/report.html", h.downloadSharedReport, Shared},
		{get, "/settings/webhook", h.showWebhook, Owner},
		{post, "/settings/webhook", h.saveWebhook, Owner},
		{post, "/settings/webhook/remove", h.removeWebhook, Owner},
		{post, "/settings/webhook/test", h.testWebhook, Owner},
	}
}

func (h *Handlers) healthz(c echo.Context) error { return c.String(http.StatusOK, "ok") }

func (h *Handlers) readyz(c echo.Context) error {
	if h.Ready != nil {
		if err := h.Ready(c.Request().Context()); err != nil {
			return c.String(http.StatusServiceUnavailable, "not ready: "+err.Error())
		}
	}
	if err := h.DB.SQL.PingContext(c.Request().Context()); err != nil {
		return c.String(http.StatusServiceUnavailable, "database unreachable")
	}
	return c.String(http.StatusOK, "ready")
}

// serveStatic serves embedded files; hashed names are cached forever.
func serveStatic(c echo.Context) error {
	name := c.Param("name")
	real, hashed := static.Lookup(name)
	if !hashed {
		real = name
	}
	if strings.Contains(real, "/") {
		return echo.ErrNotFound
	}
	if hashed {
		c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	return echo.StaticFileHandler(real, static.FS)(c)
}
