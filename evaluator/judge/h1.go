package judge

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"
)

// h1Transport sends a judge call to a plain-HTTP endpoint (a local vLLM,
// Ollama or llama.cpp server, a fake in the tests) on the calling
// goroutine: it writes the request and reads the answer itself, over a
// kept-alive HTTP/1.1 connection, with net/http's own wire code
// (Request.Write, ReadResponse). net/http's transport hands each exchange
// to two goroutines per connection (a read loop and a write loop): six of
// the ten goroutine wake-ups of a call at concurrency 1, each a thread
// wake-up that, on a small virtual machine, costs more CPU than the work
// it passes on (BENCHMARKS.md, "Run speed, thirteenth pass").
//
// Everything else goes to net/http's transport (next): HTTPS, where
// HTTP/2 and TLS are worth its machinery and a remote judge's latency
// dwarfs its cost. Plain HTTP is HTTP/1.1 there as well (net/http speaks
// HTTP/2 without TLS only when asked), so nothing is lost.
type h1Transport struct {
	next *http.Transport
	// policy is the egress policy (with its workspace's grant) the
	// transport connects under: a redirect's target is judged by it
	// (Client.egress).
	policy Egress
	// dial opens a connection that the egress policy allows; raw is the
	// socket itself (for the liveness check of a kept connection), conn
	// what the exchange writes to and reads from (the runner's fence).
	dial    func(ctx context.Context, addr string) (raw, conn net.Conn, err error)
	maxIdle int

	mu   sync.Mutex
	idle map[string][]*h1Conn // per host:port, most recently used last
	// idleTimeout closes a connection kept unused for longer: at its next
	// use, or by sweep, a timer armed while connections are kept (each
	// run has its transport, dropped at its end with what it kept).
	idleTimeout time.Duration
	sweeping    bool
	// open counts the connections open to each host:port, capped at
	// next.MaxConnsPerHost (the run's concurrency) as net/http's
	// transport caps them: a call that finds none free waits in waiters
	// for one handed back (put) or a slot freed (closeConn, nil).
	open    map[string]int
	waiters map[string][]chan *h1Conn
}

// h1Conn is one kept-alive connection.
type h1Conn struct {
	addr      string
	closed    bool // by its one owner at a time: a call, or the pool
	raw, conn net.Conn
	head      *headLimit // bounds the answer's head as br reads it
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

func newH1Transport(next *http.Transport, dial func(ctx context.Context, addr string) (net.Conn, net.Conn, error), maxIdle int) *h1Transport {
	return &h1Transport{next: next, dial: dial, maxIdle: maxIdle, idle: map[string][]*h1Conn{}, idleTimeout: next.IdleConnTimeout,
		open: map[string]int{}, waiters: map[string][]chan *h1Conn{}}
}

// SetIdleConnTimeout sets how long a connection may stay unused before it
// is closed, on both paths.
func (t *h1Transport) SetIdleConnTimeout(d time.Duration) {
	t.mu.Lock()
	t.idleTimeout = d
	t.mu.Unlock()
	t.next.IdleConnTimeout = d
}

// HTTPTransport is net/http's transport that HTTPS takes. Its settings
// are the client's: DisableKeepAlives holds on the plain-HTTP path too
// (each request then asks the endpoint to close, and no connection is
// kept).
func (t *h1Transport) HTTPTransport() *http.Transport { return t.next }

// CloseIdleConnections closes the kept connections (http.Client calls it).
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*h1Conn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			t.closeConn(c)
		}
	}
	t.next.CloseIdleConnections()
}

// RoundTrip sends req. Only plain-HTTP requests without an upgrade take
// the calling goroutine's path.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" || req.Header.Get("Upgrade") != "" {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	addr := hostPort(req.URL.Host)
	c, reused, err := t.get(ctx, addr)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	res, err := t.exchange(ctx, req, addr, c)
	if err != nil && reused && errors.Is(err, errNothingWritten) && req.GetBody != nil {
		// A kept connection the endpoint had closed, found out at the
		// write: nothing reached the endpoint, so a new one is safe.
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		req.Body = body
		if c, _, err = t.get(ctx, addr); err != nil {
			closeBody(req)
			return nil, err
		}
		res, err = t.exchange(ctx, req, addr, c)
	}
	return res, err
}

// errNothingWritten marks a write that failed before any byte went out.
var errNothingWritten = errors.New("nothing written")

// exchange writes req on c and reads the answer's head; the body is read
// by the caller, and c goes back to the pool once it has been read to its
// end (h1Body).
func (t *h1Transport) exchange(ctx context.Context, req *http.Request, addr string, c *h1Conn) (*http.Response, error) {
	// Cancellation (a hard stop, the attempt's timeout, a hedged copy
	// that lost) unblocks the connection's reads and writes: a deadline
	// in the past, set by the context itself, no goroutine needed.
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		t.closeConn(c)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	cw := &countingWriter{w: c.conn}
	c.bw.Reset(cw)
	// gzip is asked for as net/http's transport asks, and undone for the
	// caller as it does; without keep-alives the request says so, as
	// net/http's does: the wire is the same on both paths.
	askGzip := req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" && req.Method != http.MethodHead
	noKeep := t.next.DisableKeepAlives && !req.Close
	wreq, gz := req, false
	if askGzip || noKeep {
		wreq = new(http.Request)
		*wreq = *req
		wreq.Header = req.Header.Clone()
		if askGzip {
			wreq.Header.Set("Accept-Encoding", "gzip")
			gz = true
		}
		wreq.Close = wreq.Close || noKeep
	}
	var writeErr error // the write's failure, when an answer came all the same
	err := wreq.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil && cw.err != nil {
		// The connection's own failure: Request.Write reports one met
		// while copying the body as the body's (an unexported wrapper
		// that hides it, the runner's NotSent included), which
		// net/http's transport unwraps as well.
		err = cw.err
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
	if err != nil {
		var ns *NotSent
		notSent := errors.As(err, &ns)
		if cw.n == 0 {
			if notSent {
				return fail(err)
			}
			return fail(fmt.Errorf("%w: %w", errNothingWritten, err))
		}
		if ctx.Err() != nil || notSent {
			// Cancelled, or stopped by the fence part way: the endpoint
			// has an unfinished request and no answer to give.
			return fail(err)
		}
		// The endpoint answered (and closed) before it had read the whole
		// request: a 413 for a prompt too long, a 401 from a proxy. Its
		// answer, if it came, says why, as net/http's transport gives it;
		// the write error only says the connection broke.
		c.conn.SetReadDeadline(time.Now().Add(earlyAnswerWait))
		if ctx.Err() != nil {
			// Cancelled as the deadline was set: the cancellation's
			// deadline may have been overwritten.
			return fail(err)
		}
		writeErr = err
	}
	var res *http.Response
	for {
		// A head is read under net/http's limit (MaxResponseHeaderBytes'
		// default): an endpoint that sends one without end fails the call
		// instead of filling the memory.
		c.head.n = maxResponseHead
		res, err = http.ReadResponse(c.br, req)
		if err != nil {
			if c.head.n <= 0 {
				err = errHeadTooLong
			}
			if writeErr != nil {
				err = writeErr
			}
			return fail(err)
		}
		// An interim answer (100 Continue, 103 Early Hints) is followed
		// by the real one.
		if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		res.Body.Close()
	}
	c.head.n = math.MaxInt64
	res.Request = req
	keep := !res.Close && !wreq.Close && res.StatusCode != http.StatusSwitchingProtocols && writeErr == nil
	b := &h1Body{rc: res.Body, t: t, addr: addr, c: c, keep: keep, stop: stop, ctx: ctx}
	if res.Body == http.NoBody {
		b.release(true)
		return res, nil
	}
	res.Body = b
	if gz && res.Header.Get("Content-Encoding") == "gzip" {
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
		res.Uncompressed = true
		res.Body = &gzipBody{body: b}
	}
	return res, nil
}

// get takes a kept connection to addr that is still open, or dials one;
// with next.MaxConnsPerHost connections open already, it waits for one.
func (t *h1Transport) get(ctx context.Context, addr string) (*h1Conn, bool, error) {
	now := time.Now()
	for {
		t.mu.Lock()
		if cs := t.idle[addr]; len(cs) > 0 {
			c := cs[len(cs)-1]
			t.idle[addr] = cs[:len(cs)-1]
			timeout := t.idleTimeout
			t.mu.Unlock()
			if timeout > 0 && now.Sub(c.idleSince) > timeout || !connAlive(c.raw) {
				t.closeConn(c)
				continue
			}
			return c, true, nil
		}
		if limit := t.next.MaxConnsPerHost; limit <= 0 || t.open[addr] < limit {
			t.open[addr]++
			t.mu.Unlock()
			raw, conn, err := t.dial(ctx, addr)
			if err != nil {
				t.freeSlot(addr)
				return nil, false, err
			}
			head := &headLimit{r: conn, n: math.MaxInt64}
			return &h1Conn{addr: addr, raw: raw, conn: conn, head: head, br: bufio.NewReaderSize(head, 16<<10), bw: bufio.NewWriterSize(conn, 16<<10)}, false, nil
		}
		w := make(chan *h1Conn, 1)
		t.waiters[addr] = append(t.waiters[addr], w)
		t.mu.Unlock()
		select {
		case c := <-w:
			if c == nil {
				continue // a slot was freed
			}
			return c, true, nil // handed back by a call that just used it
		case <-ctx.Done():
			t.mu.Lock()
			ws := t.waiters[addr]
			k := slices.Index(ws, w)
			if k >= 0 {
				t.waiters[addr] = slices.Delete(ws, k, k+1)
			}
			t.mu.Unlock()
			if k < 0 {
				// Taken off the queue to be handed something, which
				// comes: passed on.
				if c := <-w; c != nil {
					t.put(addr, c)
				} else {
					t.passWake(addr)
				}
			}
			return nil, false, context.Cause(ctx)
		}
	}
}

// nextWaiter takes the first call waiting for a connection to addr, if
// any; t.mu is held.
func (t *h1Transport) nextWaiter(addr string) chan *h1Conn {
	ws := t.waiters[addr]
	if len(ws) == 0 {
		return nil
	}
	w := ws[0]
	t.waiters[addr] = ws[1:]
	return w
}

// freeSlot gives up a connection slot of addr (a dial failed, or its
// connection closed) and wakes the first call waiting for one.
func (t *h1Transport) freeSlot(addr string) {
	t.mu.Lock()
	t.open[addr]--
	t.mu.Unlock()
	t.passWake(addr)
}

// passWake tells the next call waiting for a connection to addr that a
// slot is free (one was freed, or the call it was meant for gave up).
func (t *h1Transport) passWake(addr string) {
	t.mu.Lock()
	w := t.nextWaiter(addr)
	t.mu.Unlock()
	if w != nil {
		w <- nil
	}
}

// closeConn closes c and frees its slot.
func (t *h1Transport) closeConn(c *h1Conn) {
	if c.closed {
		return
	}
	c.closed = true
	c.conn.Close()
	t.freeSlot(c.addr)
}

// put keeps c for the next call to addr, if there is room.
func (t *h1Transport) put(addr string, c *h1Conn) {
	c.idleSince = time.Now()
	c.bw.Reset(nil)
	t.mu.Lock()
	if w := t.nextWaiter(addr); w != nil {
		t.mu.Unlock()
		w <- c
		return
	}
	if len(t.idle[addr]) < t.maxIdle {
		t.idle[addr] = append(t.idle[addr], c)
		c = nil
		if !t.sweeping && t.idleTimeout > 0 {
			t.sweeping = true
			time.AfterFunc(t.idleTimeout, t.sweep)
		}
	}
	t.mu.Unlock()
	if c != nil {
		t.closeConn(c)
	}
}

// sweep closes the connections kept unused for longer than idleTimeout,
// and comes back when the next of those left is due.
func (t *h1Transport) sweep() {
	now := time.Now()
	var old []*h1Conn
	t.mu.Lock()
	next := time.Duration(0)
	for addr, cs := range t.idle {
		kept := cs[:0]
		for _, c := range cs {
			if left := t.idleTimeout - now.Sub(c.idleSince); t.idleTimeout > 0 && left <= 0 {
				old = append(old, c)
			} else {
				kept = append(kept, c)
				if next == 0 || left < next {
					next = left
				}
			}
		}
		clear(cs[len(kept):])
		t.idle[addr] = kept
	}
	t.sweeping = next > 0
	if t.sweeping {
		time.AfterFunc(next, t.sweep)
	}
	t.mu.Unlock()
	for _, c := range old {
		t.closeConn(c)
	}
}

// h1Body is an answer's body: read to its end, it hands its connection
// back to the pool; closed before, it closes the connection (what is left
// of the answer would have to be read first).
type h1Body struct {
	rc   io.ReadCloser
	t    *h1Transport
	addr string
	c    *h1Conn
	keep bool
	stop func() bool
	ctx  context.Context
	done bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.release(true)
	case err != nil:
		b.release(false)
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
	}
	return n, err
}

func (b *h1Body) Close() error {
	if !b.done {
		b.release(false)
	}
	return nil
}

// release ends the exchange: the connection goes back to the pool if the
// answer was read whole and both sides keep it alive, and is closed
// otherwise (or if the call was cancelled meanwhile: its deadline is set).
func (b *h1Body) release(whole bool) {
	b.done = true
	if b.stop() && whole && b.keep && b.c.br.Buffered() == 0 {
		b.c.conn.SetDeadline(time.Time{})
		b.t.put(b.addr, b.c)
		return
	}
	b.t.closeConn(b.c)
}

// gzipBody reads a gzipped answer's body, opening the gzip stream at the
// first read (an empty or failed answer may never be read).
type gzipBody struct {
	body *h1Body
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.body)
	}
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.zr.Read(p)
	if err == io.EOF && !g.body.done {
		// The gzip stream ended: what follows it must be the body's end
		// for the connection to be kept.
		var one [1]byte
		if m, _ := g.body.Read(one[:]); m > 0 || !g.body.done {
			g.body.Close()
		}
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }

// earlyAnswerWait is how long an answer is waited for after the request's
// write failed part way: one sent before the endpoint closed is already
// on its way.
const earlyAnswerWait = time.Second

// maxResponseHead bounds an answer's head, as net/http's transport does
// by default (Transport.MaxResponseHeaderBytes).
const maxResponseHead = 10 << 20

var errHeadTooLong = fmt.Errorf("the endpoint's answer headers exceeded %d bytes; aborted", maxResponseHead)

// headLimit is a connection's reader that lets at most n bytes through
// (the rest of a head being read), then fails.
type headLimit struct {
	r io.Reader
	n int64
}

func (l *headLimit) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeadTooLong
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// countingWriter counts the bytes that went out, and keeps the first
// write error.
type countingWriter struct {
	w   io.Writer
	n   int
	err error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += n
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// hostPort adds HTTP's default port to a URL's host if it has none.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(trimBrackets(host), "80")
}

func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
