package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"
)

// metricsRealm is the realm of the WWW-Authenticate challenge /metrics
// sends without its token (RFC 6750).
const metricsRealm = `Bearer realm="batcheval-metrics"`

// metrics serves this process's Prometheus metrics (the Scraper rule has
// let the request in).
func (h *Handlers) metrics(c echo.Context) error {
	h.Runner.Metrics().Handler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// asScraper enforces the Scraper rule: with a metrics token configured,
// the request must carry it (Authorization: Bearer); without one, only a
// request from this machine is served, so a server reachable from the
// network does not show every workspace's activity to anyone.
func (h *Handlers) asScraper(c echo.Context, next echo.HandlerFunc) error {
	if h.MetricsToken != "" {
		if !MetricsTokenMatches(c.Request(), h.MetricsToken) {
			c.Response().Header().Set("WWW-Authenticate", metricsRealm)
			return echo.NewHTTPError(http.StatusUnauthorized,
				"The metrics need the metrics token: send it as Authorization: Bearer <token> (the server's BATCHEVAL_METRICS_TOKEN).")
		}
		return next(c)
	}
	if !h.Network.localClient(c) {
		return echo.NewHTTPError(http.StatusForbidden,
			"The metrics are served only to this machine while no metrics token is set. To scrape them from elsewhere, "+
				"set BATCHEVAL_METRICS_TOKEN (or --metrics-token-file) on the server and send the token as Authorization: Bearer <token>.")
	}
	return next(c)
}

// MetricsTokenMatches reports whether r carries token as its bearer token.
// Both sides are hashed first so that the comparison takes the same time
// whatever the guess, its length included.
func MetricsTokenMatches(r *http.Request, token string) bool {
	got, ok := bearerToken(r)
	if !ok || token == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// RequireMetricsToken guards a metrics handler served on its own listener
// (a worker's --metrics-addr): with a token set, requests without it get
// 401; without one, the listener's address is the operator's choice and
// every request is served.
func RequireMetricsToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !MetricsTokenMatches(r, token) {
			w.Header().Set("WWW-Authenticate", metricsRealm)
			http.Error(w, "The metrics need the metrics token: send it as Authorization: Bearer <token>.", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
