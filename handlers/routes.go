package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/batcheval/batcheval/static"
)

// Register wires every route and the shared middleware onto e.
func (h *Handlers) Register(e *echo.Echo) {
	e.HTTPErrorHandler = h.ErrorHandler
	e.Use(middleware.Recover())
	// Refuse cross-site form posts (CSRF): the dashboard has no accounts yet
	// and listens on loopback, so without this any web page a user visits
	// could launch paid runs through their browser. The standard library's
	// check reads Sec-Fetch-Site / Origin; tokens can come with accounts.
	e.Use(echo.WrapMiddleware(http.NewCrossOriginProtection().Handler))
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection: "0", ContentTypeNosniff: "nosniff", XFrameOptions: "DENY",
		ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
	}))

	// Sessions, then who is asking; each route then checks its own rule.
	e.Use(h.loadSession, h.identify)
	for _, r := range h.routes() {
		e.Add(r.Method, r.Path, r.Handler, h.require(r.Access))
	}
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
	const get, post = http.MethodGet, http.MethodPost
	return []route{
		{get, "/healthz", h.healthz, Public},
		{get, "/readyz", h.readyz, Public},
		{get, "/static/:name", serveStatic, Public},

		// Accounts (accounts.go).
		{get, "/login", h.showLogin, Public},
		{post, "/login", h.login, Public},
		{post, "/logout", h.logout, SignedIn},
		{get, "/setup", h.showSetup, Public},
		{post, "/setup", h.setup, Public},
		{get, "/invites/:token", h.showInvite, Public},
		{post, "/invites/:token", h.acceptInvite, Public},
		{get, "/reset/:token", h.showReset, Public},
		{post, "/reset/:token", h.resetPassword, Public},
		{get, "/account", h.showAccount, SignedIn},
		{post, "/account/workspace", h.switchWorkspace, SignedIn},
		{post, "/workspaces", h.createWorkspace, SignedIn},
		{get, "/members", h.showMembers, Owner},
		{post, "/members/invites", h.createInvite, Owner},
		{post, "/members/invites/:id/revoke", h.revokeInvite, Owner},
		{post, "/members/:id/role", h.changeRole, Owner},
		{post, "/members/:id/remove", h.removeMember, Owner},
		{post, "/members/:id/reset", h.issueReset, Owner},
		{get, "/audit", h.showAudit, Owner},

		// Projects, datasets, rubrics.
		{get, "/", h.listProjects, Viewer},
		{post, "/projects", h.createProject, Editor},
		{get, "/projects/:id", h.showProject, Viewer},
		{get, "/projects/:id/datasets/new", h.showUploadForm, Editor},
		{post, "/projects/:id/datasets/upload", h.uploadDataset, Editor},
		{get, "/projects/:id/datasets/map", h.showMappingForm, Editor},
		{post, "/projects/:id/datasets/map", h.importDataset, Editor},
		{get, "/datasets/:id", h.showDataset, Viewer},
		{get, "/projects/:id/rubrics/new", h.newRubric, Editor},
		{post, "/projects/:id/rubrics", h.postNewRubric, Editor},
		// The edit page is also the only page that shows a rubric.
		{get, "/rubrics/:id/edit", h.editRubric, Viewer},
		{post, "/rubrics/:id", h.postRubric, Editor},
		{post, "/rubrics/preview", h.previewRubric, Editor},

		// Judges hold keys and spend money: owners manage them; everyone
		// sees the list (keys are never shown).
		{get, "/judges", h.listJudges, Viewer},
		{get, "/judges/new", h.newJudge, Owner},
		{post, "/judges", h.createJudge, Owner},
		{get, "/judges/:id/edit", h.editJudge, Owner},
		{post, "/judges/:id", h.updateJudge, Owner},
		{post, "/judges/:id/test", h.testJudge, Owner},

		// Runs, experiments, comparisons.
		{get, "/projects/:id/runs/new", h.showLaunchForm, Editor},
		{post, "/projects/:id/runs", h.launchRun, Editor},
		{post, "/runs/estimate", h.estimateRun, Editor},
		{get, "/runs", h.listRuns, Viewer},
		{get, "/runs/:id", h.showRun, Viewer},
		{post, "/runs/:id/cancel", h.cancelRun, Editor},
		{get, "/runs/:id/events", h.streamRunEvents, Viewer},
		{get, "/runs/:id/samples/:rowID", h.showRunSample, Viewer},
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
		{get, "/projects/:id/experiments", h.listExperiments, Viewer},
		{get, "/experiments/:id", h.showExperiment, Viewer},
		{get, "/compare", h.compareRuns, Viewer},
		{get, "/compare/sample", h.compareSample, Viewer},

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
