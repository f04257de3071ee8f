package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// Rate limits of the JSON API: each token may send APIRateLimit requests
// a minute, and launch APILaunchRateLimit runs or experiments a minute
// (a loop of POST .../runs was otherwise held back only by the spending
// cap). The limits are kept in the database as a generic cell rate
// (models.TakeAPIRate), so server processes sharing one database share
// them, and a burst across the turn of a minute gets no second allowance.
// Only tokens are limited: the local user of a loopback server with no
// accounts is not.
//
// Every answer to a token says where it stands, in the IETF's RateLimit
// header fields (draft-ietf-httpapi-ratelimit-headers): RateLimit-Policy
// names the limits ("requests";q=600;w=60, and on a launch route
// "launches";q=30;w=60), RateLimit what is left of each (r, the requests
// that would pass now; t, the seconds until the whole limit is back).
// A request over a limit is answered 429 rate_limited with Retry-After,
// the seconds until one would pass.

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
		var states rateStates
		err := h.takeAPIRate(c, &states, p.TokenID, models.RateRequests, h.APIRateLimit,
			"this token has sent its %d API requests of this minute (BATCHEVAL_API_RATE_LIMIT): wait %d s (Retry-After) and send this one again")
		if err == nil && launch {
			err = h.takeAPIRate(c, &states, p.TokenID, models.RateLaunches, h.APILaunchRateLimit,
				"nothing was launched: this token has made its %d launches of this minute (runs and experiments, BATCHEVAL_API_LAUNCH_RATE_LIMIT); wait %d s (Retry-After) and launch again")
		}
		states.write(c.Response().Header())
		if err != nil {
			return err
		}
		return next(c)
	}
}

// rateStates are the limits a request was counted under, for its headers.
type rateStates struct{ policy, left []string }

// write sets the RateLimit-Policy and RateLimit fields (none when no
// limit is on).
func (s rateStates) write(hd http.Header) {
	if len(s.policy) == 0 {
		return
	}
	hd.Set("RateLimit-Policy", strings.Join(s.policy, ", "))
	hd.Set("RateLimit", strings.Join(s.left, ", "))
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// takeAPIRate counts one request of the token in bucket and refuses it
// (429, Retry-After) when that goes over limit; limit 0 counts nothing.
// format takes the limit and the seconds to wait. What the limit says is
// added to states.
func (h *Handlers) takeAPIRate(c echo.Context, states *rateStates, tokenID int64, bucket string, limit int, format string) error {
	if limit <= 0 {
		return nil
	}
	var at time.Time
	if h.rateClock != nil {
		at = h.rateClock()
	}
	d, err := h.DB.TakeAPIRate(c.Request().Context(), tokenID, bucket, limit, at)
	if err != nil {
		return err
	}
	states.policy = append(states.policy, fmt.Sprintf("%q;q=%d;w=%d", bucket, limit, int(models.RateWindow/time.Second)))
	states.left = append(states.left, fmt.Sprintf("%q;r=%d;t=%d", bucket, d.Remaining, ceilSeconds(d.Reset)))
	if d.Allowed {
		return nil
	}
	wait := max(ceilSeconds(d.RetryAfter), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(format, limit, wait))
}
