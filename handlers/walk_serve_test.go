package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// walkBound bounds one request of a route walk. A page answers in well
// under a second on an idle machine; the bound is there only so that a
// handler that truly hangs fails the walk instead of the whole package's
// -timeout, and is generous so that a loaded machine (-race, -cpu 1,
// other suites beside it) never reaches it.
const walkBound = 2 * time.Minute

// serveWalk serves req on h the way the route walks do and returns the
// recorded answer. A progress stream (text/event-stream) does not end by
// itself while its run goes on: it is cut as soon as it has flushed
// something past its headers (its first event or keep-alive), so the walk
// waits for that event and not for a fixed time. Any other answer runs to
// its end, within walkBound.
func serveWalk(ctx context.Context, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rctx, cancel := context.WithTimeout(ctx, walkBound)
	defer cancel()
	w := &streamCutter{ResponseRecorder: httptest.NewRecorder(), cut: cancel}
	h.ServeHTTP(w, req.WithContext(rctx))
	return w.ResponseRecorder
}

// streamCutter is a recorder that ends its request's context once an
// event stream has flushed a body.
type streamCutter struct {
	*httptest.ResponseRecorder
	cut context.CancelFunc
}

// Flush records the flush and cuts an event stream that has sent
// something.
func (w *streamCutter) Flush() {
	w.ResponseRecorder.Flush()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") && w.Body.Len() > 0 {
		w.cut()
	}
}
