package handlers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"
)

// Page admission. A page is CPU work (queries, statistics read back,
// rendering a few hundred kilobytes of HTML): about 7 ms of one core for a
// finished run's page. With fifty readers and four runs on two cores,
// letting every request start at once makes them all share the CPU, so
// each takes as long as the slowest burst and the 99th percentile grows
// with the number of readers (measured: p99 18 s under load, p50 300 ms).
// Admitting a few at a time, in arrival order, keeps each admitted page
// fast and makes the wait a plain queue: the same throughput, a much
// shorter tail. Only pages are admitted this way; downloads stream for as
// long as the client reads, server-sent events last for the run, and
// static files, health checks and metrics must answer even when the pages
// are busy.

// DefaultPageConcurrency is how many pages render at once when
// Handlers.PageConcurrency is 0: two per core, enough to overlap a page's
// database waits with another's rendering.
func DefaultPageConcurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// pageQueueWait is how long a request waits for its turn before it is
// answered 503 with Retry-After: long enough for a burst to drain, short
// enough that an overloaded server says so instead of hanging.
var pageQueueWait = 30 * time.Second

// pageGate admits at most n page requests at once, first come first
// served (semaphore.Weighted wakes waiters in order).
type pageGate struct {
	sem *semaphore.Weighted
}

// pageConcurrencyOf is the gate's size for the PageConcurrency setting.
func pageConcurrencyOf(setting int) int {
	if setting == 0 {
		return DefaultPageConcurrency()
	}
	return setting
}

// newPageGate returns a gate of n places, or nil (no gate) when n <= 0.
func newPageGate(n int) *pageGate {
	if n <= 0 {
		return nil
	}
	return &pageGate{sem: semaphore.NewWeighted(int64(n))}
}

// errPageBusy is answered when a page waited pageQueueWait for its turn.
var errPageBusy = errors.New("page queue wait exceeded")

// enter waits for the request's turn; the caller must call the returned
// release once done.
func (g *pageGate) enter(ctx context.Context) (release func(), err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, pageQueueWait, errPageBusy)
	defer cancel()
	if err := g.sem.Acquire(ctx, 1); err != nil {
		return nil, context.Cause(ctx)
	}
	return func() { g.sem.Release(1) }, nil
}

// pageRoute reports whether a GET route renders a page (admitted through
// the gate) rather than serving a file, a stream, a download, a probe or
// the JSON API.
func pageRoute(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/favicon.ico", "/static/:name":
		return false
	}
	if strings.HasPrefix(path, "/api/") {
		return false
	}
	for _, suffix := range []string{"/events", ".csv", ".json", ".html", "/export"} {
		if strings.HasSuffix(path, suffix) {
			return false
		}
	}
	return true
}

// admitPages wraps a page's handler with the gate; other routes, and every
// route when the gate is off, are returned unchanged.
func (h *Handlers) admitPages(method, path string, next echo.HandlerFunc) echo.HandlerFunc {
	if h.pages == nil || method != http.MethodGet || !pageRoute(path) {
		return next
	}
	gate := h.pages
	return func(c echo.Context) error {
		release, err := gate.enter(c.Request().Context())
		if err != nil {
			if errors.Is(err, errPageBusy) {
				c.Response().Header().Set("Retry-After", "5")
				return echo.NewHTTPError(http.StatusServiceUnavailable,
					"The server is busy with other pages; try again in a few seconds.")
			}
			// The client went away while waiting: nobody reads the answer.
			return echo.NewHTTPError(http.StatusServiceUnavailable, "Request cancelled while waiting for its turn.")
		}
		// The page is drawn into memory while it holds its place and sent
		// after giving the place up: a client reading slowly must not keep
		// others' pages waiting.
		resp := c.Response()
		w := &heldPage{ResponseWriter: resp.Writer}
		resp.Writer = w
		func() {
			// Deferred so that a panicking handler frees its place too
			// (Recover, outside, answers it on the real writer).
			defer func() {
				release()
				resp.Writer = w.ResponseWriter
			}()
			err = next(c)
		}()
		if werr := w.send(); werr != nil && err == nil {
			err = werr
		}
		return err
	}
}

// heldPage keeps a page's status and body until the page has given up its
// place; headers go straight to the real writer's map (they are sent with
// the status, later).
type heldPage struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (p *heldPage) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

func (p *heldPage) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return p.body.Write(b)
}

// Flush is a no-op: the page is sent whole by send.
func (p *heldPage) Flush() {}

// send writes what the handler wrote, if anything, to the real writer.
func (p *heldPage) send() error {
	if p.status == 0 {
		return nil
	}
	p.ResponseWriter.WriteHeader(p.status)
	_, err := p.body.WriteTo(p.ResponseWriter)
	return err
}
