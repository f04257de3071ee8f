package handlers

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamWait bounds a test's wait for something a working server does
// within a poll or two (an event on a stream, a stream that ends): a
// minute, because a passing run never waits that long, while a loaded
// machine under -race can stretch a 100 ms poll to seconds. A fixed sleep
// followed by a short deadline was the cause of these tests' flakes.
const streamWait = time.Minute

// streamRecorder records a streamed answer (server-sent events) that the
// test reads while the handler is still writing it, which
// httptest.ResponseRecorder does not allow without a data race. A test
// waits for what it needs with waitFor instead of sleeping.
type streamRecorder struct {
	mu      sync.Mutex
	header  http.Header
	code    int
	body    bytes.Buffer
	changed chan struct{} // closed (and replaced) at every write
}

func newStreamRecorder() *streamRecorder {
	return &streamRecorder{header: http.Header{}, changed: make(chan struct{})}
}

// Header is only touched by the handler's goroutine before it writes.
func (r *streamRecorder) Header() http.Header { return r.header }

func (r *streamRecorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.code == 0 {
		r.code = code
	}
}

func (r *streamRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.body.Write(b)
	close(r.changed)
	r.changed = make(chan struct{})
	return n, err
}

// Flush is what a stream calls after each event; the body is already
// readable.
func (r *streamRecorder) Flush() {}

// Code is the status written so far (0: none yet).
func (r *streamRecorder) Code() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.code
}

// String is the body written so far.
func (r *streamRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body.String()
}

// waitFor waits until the body contains want, the handler returned
// (done closed), or streamWait passed; it reports whether want came.
func (r *streamRecorder) waitFor(want string, done <-chan struct{}) bool {
	deadline := time.After(streamWait)
	for {
		r.mu.Lock()
		found, changed := strings.Contains(r.body.String(), want), r.changed
		r.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return strings.Contains(r.String(), want)
		case <-deadline:
			return false
		}
	}
}

// waitDone waits up to streamWait for a streaming handler to return; if
// it does not, it cancels the request (cancel) and waits for the handler
// to notice, so that no goroutine outlives the test, and reports false.
func waitDone(done <-chan struct{}, cancel func()) bool {
	select {
	case <-done:
		return true
	case <-time.After(streamWait):
		cancel()
		<-done
		return false
	}
}

func TestStreamRecorderWaitFor(t *testing.T) {
	rec := newStreamRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, part := range []string{"event: pro", "gress\n", "data: {}\n\n"} {
			time.Sleep(time.Millisecond)
			rec.Write([]byte(part))
		}
	}()
	if !rec.waitFor("event: progress\n", done) {
		t.Fatalf("waitFor missed an event written in two parts: %q", rec.String())
	}
	<-done
	if rec.waitFor("event: ended", done) {
		t.Error("waitFor found an event that was never written")
	}
	if rec.Code() != http.StatusOK {
		t.Errorf("code %d after a write without WriteHeader, want 200", rec.Code())
	}
}
