package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// Rate limits of the JSON API: each token may send APIRateLimit requests
// a minute, and launch APILaunchRateLimit runs or experiments a minute
// (a loop of POST .../runs was otherwise held back only by the spending
// cap). A request over a limit is answered 429 rate_limited with
// Retry-After, the seconds until the minute's count restarts. The counts
// are kept in the database (models.CountAPIRequest), so server processes
// sharing one database share them. Only tokens are counted: the local
// user of a loopback server with no accounts is not limited.

// The limits New sets (the operator's BATCHEVAL_API_RATE_LIMIT and
// BATCHEVAL_API_LAUNCH_RATE_LIMIT).
const (
	DefaultAPIRateLimit       = 600
	DefaultAPILaunchRateLimit = 30
)

// apiLaunchRoutes are the routes counted as launches.
var apiLaunchRoutes = map[string]bool{
	http.MethodPost + " /api/v1/projects/:id/runs":        true,
	http.MethodPost + " /api/v1/projects/:id/experiments": true,
}

// limitAPIRate wraps an API route's handler (after the access check,
// which says whose token it is) with the token's rate limits.
func (h *Handlers) limitAPIRate(method, path string, next echo.HandlerFunc) echo.HandlerFunc {
	launch := apiLaunchRoutes[method+" "+path]
	return func(c echo.Context) error {
		p := principalOf(c.Request().Context())
		if p.Kind != Token || p.TokenID == 0 {
			return next(c)
		}
		if err := h.takeAPIRate(c, p.TokenID, models.RateRequests, h.APIRateLimit,
			"this token has sent its %d API requests of this minute (BATCHEVAL_API_RATE_LIMIT): wait %d s (Retry-After) and send this one again"); err != nil {
			return err
		}
		if launch {
			if err := h.takeAPIRate(c, p.TokenID, models.RateLaunches, h.APILaunchRateLimit,
				"nothing was launched: this token has made its %d launches of this minute (runs and experiments, BATCHEVAL_API_LAUNCH_RATE_LIMIT); wait %d s (Retry-After) and launch again"); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// takeAPIRate counts one request of the token in bucket and refuses it
// (429, Retry-After) when that goes over limit; limit 0 counts nothing.
// format takes the limit and the seconds to wait.
func (h *Handlers) takeAPIRate(c echo.Context, tokenID int64, bucket string, limit int, format string) error {
	if limit <= 0 {
		return nil
	}
	n, err := h.DB.CountAPIRequest(c.Request().Context(), tokenID, bucket)
	if err != nil {
		return err
	}
	if n.Hits <= limit {
		return nil
	}
	wait := max(int((n.Reset+999_999_999)/1_000_000_000), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(format, limit, wait))
}
