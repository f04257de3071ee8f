package judge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAnswerBodyBounded: a successful answer over maxAnswerBody fails its
// attempt as a malformed answer that says what to check, without reading
// the rest into memory; on both transports (plain HTTP on the calling
// goroutine, HTTPS on net/http's), whether or not the endpoint announced
// the length. Before, a 100 MB answer was read whole (the server went
// from 128 MB to 734 MB at concurrency 2).
func TestAnswerBodyBounded(t *testing.T) {
	t.Parallel()
	chunk := strings.Repeat("x", 1<<20)
	for _, tls := range []bool{false, true} {
		for _, announced := range []bool{false, true} {
			name := map[bool]string{false: "plain", true: "https"}[tls] + map[bool]string{false: ", no length", true: ", length announced"}[announced]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sent := make(chan int, 1)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/json")
					const mib = maxAnswerBody>>20 + 32
					if announced {
						w.Header().Set("Content-Length", strconv.Itoa(mib<<20))
					}
					n := 0
					for range mib {
						if _, err := io.WriteString(w, chunk); err != nil {
							break
						}
						n++
					}
					sent <- n
				})
				var srv *httptest.Server
				if tls {
					srv = httptest.NewTLSServer(h)
				} else {
					srv = httptest.NewServer(h)
				}
				t.Cleanup(srv.Close)
				hc := ClientFor(2, nil)
				if tls {
					hc = srv.Client()
				}
				c := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "judge-model", Timeout: 30 * time.Second, MaxAttempts: 1, HTTPClient: hc})
				_, err := c.Complete(context.Background(), simpleRequest())
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindMalformed || !strings.Contains(e.Error(), "MiB") {
					t.Fatalf("oversize answer: %v, want a malformed answer naming the bound", err)
				}
				select {
				case n := <-sent:
					// The socket buffers on both sides take a few MiB more
					// before the endpoint's writes fail.
					if n > maxAnswerBody>>20+20 {
						t.Errorf("the endpoint wrote %d MiB of the answer: the client read on past its bound", n)
					}
				case <-time.After(10 * time.Second):
					t.Error("the endpoint was still writing 10 s after the call ended")
				}
			})
		}
	}
}
