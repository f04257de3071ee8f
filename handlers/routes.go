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

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	// Prometheus metrics of this process's runner and of the shared
	// database (runs by status, queue depth); see README "Observability".
	e.GET("/metrics", echo.WrapHandler(h.Runner.Metrics().Handler()))
	e.GET("/static/:name", serveStatic)

	h.registerProjectRoutes(e)
	h.registerRunRoutes(e)
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
