package judge

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connCounter is a fake judge that counts the connections opened to it
// and the requests it received.
type connCounter struct {
	srv            *httptest.Server
	conns, reqs    atomic.Int64
	mu             sync.Mutex
	acceptEncoding []string
}

func newConnCounter(t *testing.T, idle time.Duration, handle func(w http.ResponseWriter, r *http.Request, n int64)) *connCounter {
	t.Helper()
	cc := &connCounter{}
	cc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := cc.reqs.Add(1)
		cc.mu.Lock()
		cc.acceptEncoding = append(cc.acceptEncoding, r.Header.Get("Accept-Encoding"))
		cc.mu.Unlock()
		handle(w, r, n)
	}))
	cc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cc.conns.Add(1)
		}
	}
	cc.srv.Config.IdleTimeout = idle
	cc.srv.Start()
	t.Cleanup(cc.srv.Close)
	return cc
}

func writeOK(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, okBody(text))
}

// TestPlainHTTPExchange: calls to a plain-HTTP judge are written and read
// on the calling goroutine (h1Transport) and keep what net/http's
// transport gave them: one kept-alive connection for calls one after
// another, a new one when the endpoint closed the kept one (the call is
// sent once, on the new connection, and takes one attempt) or asked for
// it to be closed, gzipped and chunked answers read whole, and a
// connection whose answer was not read to its end never reused.
func TestPlainHTTPExchange(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxErrorBody*2)
	cases := []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, n int64)
		// idle is the server's keep-alive limit; pause the wait between calls.
		idle, pause time.Duration
		calls       int
		wantConns   int64
		wantErrs    int // calls that fail (each on the first attempt)
	}{
		{name: "calls one after another share a connection", calls: 5, wantConns: 1,
			handle: func(w http.ResponseWriter, _ *http.Request, n int64) { writeOK(w, "Score: 4") }},
		{name: "the endpoint closed the kept connection", calls: 3, wantConns: 3, idle: 30 * time.Millisecond, pause: 200 * time.Millisecond,
			handle: func(w http.ResponseWriter, _ *http.Request, n int64) { writeOK(w, "Score: 4") }},
		{name: "the endpoint asks to close", calls: 3, wantConns: 3,
			handle: func(w http.ResponseWriter, _ *http.Request, n int64) {
				w.Header().Set("Connection", "close")
				writeOK(w, "Score: 4")
			}},
		{name: "gzipped answer", calls: 3, wantConns: 1,
			handle: func(w http.ResponseWriter, r *http.Request, n int64) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, okBody("Score: 4"))
				zw.Close()
			}},
		{name: "chunked answer", calls: 3, wantConns: 1,
			handle: func(w http.ResponseWriter, _ *http.Request, n int64) {
				w.Header().Set("Content-Type", "application/json")
				body := okBody("Score: 4")
				for i := 0; i < len(body); i += 7 {
					io.WriteString(w, body[i:min(i+7, len(body))])
					w.(http.Flusher).Flush()
				}
			}},
		{name: "an error answer longer than what is read of it", calls: 3, wantConns: 2, wantErrs: 1,
			handle: func(w http.ResponseWriter, _ *http.Request, n int64) {
				if n == 2 {
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, `{"error":{"message":"`+big+`"}}`)
					return
				}
				writeOK(w, "Score: 4")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cc := newConnCounter(t, tc.idle, tc.handle)
			cfg := Config{BaseURL: cc.srv.URL + "/v1", Model: "judge-model", Timeout: 5 * time.Second, MaxAttempts: 1}
			cfg.HTTPClient = ClientFor(4, nil)
			if _, ok := cfg.HTTPClient.Transport.(*h1Transport); !ok {
				t.Fatalf("judge client's transport is %T, want *h1Transport", cfg.HTTPClient.Transport)
			}
			c := mustNew(t, cfg)
			errs := 0
			for i := range tc.calls {
				if i > 0 {
					time.Sleep(tc.pause)
				}
				resp, err := c.Complete(context.Background(), simpleRequest())
				if err != nil {
					errs++
					var e *Error
					if !errors.As(err, &e) || e.Attempts != 1 {
						t.Errorf("call %d: %v", i, err)
					}
					continue
				}
				if resp.Text() != "Score: 4" || resp.Attempts != 1 {
					t.Errorf("call %d: text %q in %d attempts, want %q in 1", i, resp.Text(), resp.Attempts, "Score: 4")
				}
			}
			if errs != tc.wantErrs {
				t.Errorf("%d calls failed, want %d", errs, tc.wantErrs)
			}
			if got := cc.reqs.Load(); got != int64(tc.calls) {
				t.Errorf("the endpoint received %d requests for %d calls", got, tc.calls)
			}
			if got := cc.conns.Load(); got != tc.wantConns {
				t.Errorf("%d connections opened, want %d", got, tc.wantConns)
			}
			cc.mu.Lock()
			defer cc.mu.Unlock()
			for i, ae := range cc.acceptEncoding {
				if ae != "gzip" {
					t.Errorf("request %d: Accept-Encoding %q, want gzip (as net/http's transport asks)", i, ae)
				}
			}
		})
	}
}

// TestPlainHTTPCancelClosesTheConnection: a call cancelled while its
// answer is awaited returns at once as cancelled, and its connection is
// closed (the endpoint sees the request end) rather than kept with an
// answer still to come on it. The next call opens a new connection.
func TestPlainHTTPCancelClosesTheConnection(t *testing.T) {
	t.Parallel()
	arrived, ended := make(chan struct{}, 1), make(chan struct{}, 1)
	cc := newConnCounter(t, 0, func(w http.ResponseWriter, r *http.Request, n int64) {
		if n == 1 {
			arrived <- struct{}{}
			<-r.Context().Done()
			ended <- struct{}{}
			return
		}
		writeOK(w, "Score: 2")
	})
	cfg := Config{BaseURL: cc.srv.URL + "/v1", Model: "judge-model", Timeout: time.Minute, MaxAttempts: 1, HTTPClient: ClientFor(2, nil)}
	c := mustNew(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	start := time.Now()
	_, err := c.Complete(ctx, simpleRequest())
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindCancelled || e.NeverSent {
		t.Fatalf("cancelled call: %v, want a cancelled call that reached the judge", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cancelled call took %v to return", d)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint never saw the cancelled call's connection close")
	}
	resp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil || resp.Text() != "Score: 2" {
		t.Fatalf("call after the cancel: %q, %v", resp.Text(), err)
	}
	if got := cc.conns.Load(); got != 2 {
		t.Errorf("%d connections opened, want 2 (the cancelled one is not reused)", got)
	}
}

// TestPlainHTTPTimeout: an attempt that runs out of time is a timeout
// (retried as one), not a network failure, on the calling goroutine's
// path as on net/http's.
func TestPlainHTTPTimeout(t *testing.T) {
	t.Parallel()
	cc := newConnCounter(t, 0, func(w http.ResponseWriter, r *http.Request, n int64) {
		if n == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		writeOK(w, "Score: 3")
	})
	cfg := Config{BaseURL: cc.srv.URL + "/v1", Model: "judge-model", Timeout: 100 * time.Millisecond, MaxAttempts: 2,
		TimeoutRetries: 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, HTTPClient: ClientFor(2, nil)}
	resp, err := mustNew(t, cfg).Complete(context.Background(), simpleRequest())
	if err != nil || resp.Text() != "Score: 3" || resp.Attempts != 2 {
		t.Fatalf("got %q in %d attempts, %v; want the second attempt's answer", resp.Text(), resp.Attempts, err)
	}
}

// TestHTTPSGoesToNetHTTP: only plain HTTP takes the calling goroutine's
// path; HTTPS (TLS, HTTP/2 where offered) stays with net/http's
// transport, and never dials through the plain path.
func TestHTTPSGoesToNetHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeOK(w, "tls") }))
	t.Cleanup(srv.Close)
	var dialed atomic.Int64
	tr := newH1Transport(srv.Client().Transport.(*http.Transport).Clone(), func(context.Context, string) (net.Conn, net.Conn, error) {
		dialed.Add(1)
		return nil, nil, errors.New("the plain path dialed")
	}, 2)
	cfg := Config{BaseURL: srv.URL + "/v1", Model: "judge-model", Timeout: 5 * time.Second, MaxAttempts: 1, HTTPClient: &http.Client{Transport: tr}}
	resp, err := mustNew(t, cfg).Complete(context.Background(), simpleRequest())
	if err != nil || resp.Text() != "tls" {
		t.Fatalf("HTTPS call: %q, %v", resp.Text(), err)
	}
	if n := dialed.Load(); n != 0 {
		t.Errorf("the plain path dialed %d times for an HTTPS call", n)
	}
}

// TestPlainHTTPIdleConnectionsClosed: a kept connection unused for longer
// than the idle limit is closed without waiting for a next call (a run's
// transport is dropped at its end with what it kept; net/http's closed
// its idle connections on a timer, and so must this path).
func TestPlainHTTPIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeOK(w, "Score: 1") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	hc := ClientFor(2, nil)
	hc.Transport.(*h1Transport).SetIdleConnTimeout(50 * time.Millisecond)
	c := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "judge-model", Timeout: 5 * time.Second, MaxAttempts: 1, HTTPClient: hc})
	if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the idle connection was still open 5 s after its 50 ms idle limit")
	}
}

// TestPlainHTTPOneZeroServer: an endpoint that answers in HTTP/1.0 without
// a length and closes the connection (Python's http.server, by default)
// is read to the connection's end, and every call opens its own.
func TestPlainHTTPOneZeroServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"+okBody("Score: 5"))
			}()
		}
	}()
	c := mustNew(t, Config{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "judge-model", Timeout: 5 * time.Second, MaxAttempts: 1, HTTPClient: ClientFor(2, nil)})
	for i := range 3 {
		resp, err := c.Complete(context.Background(), simpleRequest())
		if err != nil || resp.Text() != "Score: 5" {
			t.Fatalf("call %d: %q, %v", i, resp.Text(), err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 calls to an HTTP/1.0 endpoint, want 3", n)
	}
}

// rawJudge is a fake endpoint that speaks over a bare TCP connection, for
// answers net/http's server would not give.
func rawJudge(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	return "http://" + ln.Addr().String() + "/v1"
}

// TestPlainHTTPHeadBounded: an endpoint whose answer's head never ends
// fails the call once net/http's limit (10 MiB) is read, as on net/http's
// transport, instead of being read into memory without end.
func TestPlainHTTPHeadBounded(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	url := rawJudge(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Endless: ")
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 200 {
			n, err := c.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader("{}"))
	res, err := ClientFor(1, nil).Transport.RoundTrip(req)
	if err == nil {
		res.Body.Close()
		t.Fatal("an endless head was taken as an answer")
	}
	if !strings.Contains(fmt.Sprint(err), "exceeded") {
		t.Errorf("err = %v, want the head's limit", err)
	}
	if n := sent.Load(); n > 64<<20 {
		t.Errorf("the head was read on to %d MiB, far past the limit", n>>20)
	}
}

// TestPlainHTTPEarlyAnswer: an endpoint that refuses a request before it
// has read all of it (a 413 for a prompt too long) and closes gives the
// call its answer, as net/http's transport does, not the write's "broken
// pipe": the product reports the refusal in the endpoint's words and does
// not send the call again.
func TestPlainHTTPEarlyAnswer(t *testing.T) {
	t.Parallel()
	var reqs atomic.Int64
	url := rawJudge(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if l == "\r\n" {
				break
			}
		}
		reqs.Add(1)
		m := `{"error":{"message":"the prompt is too long for this model"}}`
		io.WriteString(c, "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(m))+"\r\n\r\n"+m)
		c.(*net.TCPConn).CloseWrite()
		time.Sleep(50 * time.Millisecond)
		// Closed with the request's body unread: a reset.
	})
	cfg := Config{BaseURL: url, Model: "judge-model", Timeout: 10 * time.Second, MaxAttempts: 3,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, HTTPClient: ClientFor(1, nil)}
	r := simpleRequest()
	r.Messages[len(r.Messages)-1].Content = strings.Repeat("a long prompt ", 1<<20)
	_, err := mustNew(t, cfg).Complete(context.Background(), r)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a judge error", err)
	}
	if e.Status != http.StatusRequestEntityTooLarge || !strings.Contains(e.Message, "too long") {
		t.Errorf("status %d, message %q: want the endpoint's 413 and its words", e.Status, e.Message)
	}
	if n := reqs.Load(); n != 1 {
		t.Errorf("the endpoint received %d requests, want 1 (a 413 is not retried)", n)
	}
}

// TestPlainHTTPNoKeepAlives: a client whose transport has keep-alives
// off (the webhooks') keeps none on the plain-HTTP path either: every
// request asks the endpoint to close, as net/http's does, and goes out on
// a connection of its own.
func TestPlainHTTPNoKeepAlives(t *testing.T) {
	t.Parallel()
	var asked atomic.Int64
	cc := newConnCounter(t, 0, func(w http.ResponseWriter, r *http.Request, n int64) {
		if r.Close {
			asked.Add(1)
		}
		writeOK(w, "Score: 4")
	})
	hc := ClientFor(2, nil)
	hc.Transport.(*h1Transport).next.DisableKeepAlives = true
	cfg := Config{BaseURL: cc.srv.URL + "/v1", Model: "judge-model", Timeout: 10 * time.Second, MaxAttempts: 1, HTTPClient: hc}
	c := mustNew(t, cfg)
	for range 3 {
		if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if got := cc.conns.Load(); got != 3 {
		t.Errorf("%d connections for 3 calls, want 3 (none kept)", got)
	}
	if got := asked.Load(); got != 3 {
		t.Errorf("%d of 3 requests said Connection: close", got)
	}
}

// stopAfterFirstWrite lets one write through, then refuses as the
// runner's fence does once the run's lease is lost.
type stopAfterFirstWrite struct {
	net.Conn
	writes atomic.Int64
}

func (c *stopAfterFirstWrite) Write(p []byte) (int, error) {
	if c.writes.Add(1) > 1 {
		return 0, &NotSent{Err: errors.New("the run's lease was lost")}
	}
	return c.Conn.Write(p)
}

// TestPlainHTTPFencedPartWay: a request the fence stops part way (a
// prompt longer than the 16 KiB write buffer goes out in pieces) fails at
// once as not sent, as on net/http's transport: not as a network failure
// (an attempt that counts, and toward the judge's breaker), nor after
// waiting for an answer from an endpoint that holds half a request.
func TestPlainHTTPFencedPartWay(t *testing.T) {
	t.Parallel()
	url := rawJudge(t, func(c net.Conn) {
		io.Copy(io.Discard, c) // the head and what came of the body, until the call closes
	})
	hc := ClientFor(1, func(c net.Conn) net.Conn { return &stopAfterFirstWrite{Conn: c} })
	cfg := Config{BaseURL: url, Model: "judge-model", Timeout: 10 * time.Second, MaxAttempts: 1, HTTPClient: hc}
	r := simpleRequest()
	r.Messages[len(r.Messages)-1].Content = strings.Repeat("a long prompt ", 1<<14)
	start := time.Now()
	_, err := mustNew(t, cfg).Complete(context.Background(), r)
	var ns *NotSent
	if !errors.As(err, &ns) {
		t.Fatalf("err = %v, want not sent", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the fenced call took %v to fail", d)
	}
}

// TestPlainHTTPConnectionsCapped: the plain-HTTP path keeps a run's
// connections within its concurrency, as net/http's transport does
// (MaxConnsPerHost): calls beyond it wait for a connection handed back,
// or for a slot freed when one closes, and a call that gives up waiting
// (its context ends) leaves the others theirs. Before, it opened one
// connection per call in flight (8 for a client of concurrency 2).
func TestPlainHTTPConnectionsCapped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		close bool // the endpoint closes each connection after its answer
	}{
		{name: "connections handed back"},
		{name: "connections closed after each answer", close: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var inFlight, peak atomic.Int64
			cc := newConnCounter(t, 0, func(w http.ResponseWriter, r *http.Request, n int64) {
				now := inFlight.Add(1)
				for {
					p := peak.Load()
					if now <= p || peak.CompareAndSwap(p, now) {
						break
					}
				}
				time.Sleep(30 * time.Millisecond)
				inFlight.Add(-1)
				if tc.close {
					w.Header().Set("Connection", "close")
				}
				writeOK(w, "Score: 2")
			})
			c := mustNew(t, Config{BaseURL: cc.srv.URL + "/v1", Model: "judge-model", Timeout: 10 * time.Second, MaxAttempts: 1, HTTPClient: ClientFor(2, nil)})
			// The last call starts once the others hold both connections,
			// and gives up while waiting for one.
			gaveUp := make(chan error, 1)
			var wg sync.WaitGroup
			for i := range 8 {
				if i == 7 {
					for deadline := time.Now().Add(5 * time.Second); inFlight.Load() < 2 && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond)
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := context.Background()
					if i == 7 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
						defer cancel()
					}
					resp, err := c.Complete(ctx, simpleRequest())
					if i == 7 {
						gaveUp <- err
						return
					}
					if err != nil || resp.Text() != "Score: 2" {
						t.Errorf("call %d: %q, %v", i, resp.Text(), err)
					}
				}()
			}
			wg.Wait()
			if got := peak.Load(); got > 2 {
				t.Errorf("the endpoint had %d calls at once from a client of concurrency 2", got)
			}
			wantConns := int64(2)
			if tc.close {
				wantConns = cc.reqs.Load()
			}
			if got := cc.conns.Load(); got != wantConns {
				t.Errorf("%d connections opened, want %d", got, wantConns)
			}
			var e *Error
			if err := <-gaveUp; !errors.As(err, &e) || e.Kind != KindCancelled || !e.NeverSent {
				t.Errorf("the call that gave up waiting for a connection: %v, want cancelled before anything was sent", err)
			}
			// Nothing is left holding a slot: the next calls go through.
			for i := range 3 {
				if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
					t.Fatalf("call %d after the burst: %v", i, err)
				}
			}
		})
	}
}
