package handlers

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

func TestPageRoute(t *testing.T) {
	cases := []struct {
		path string
		page bool
	}{
		{"/", true},
		{"/runs/:id", true},
		{"/runs/:id/samples/:rowID", true},
		{"/datasets/:id", true},
		{"/compare", true},
		{"/s/:token", true},
		{"/runs/:id/events", false},
		{"/runs/:id/export.csv", false},
		{"/runs/:id/export.json", false},
		{"/runs/:id/report.html", false},
		{"/rubrics/:id/export", false},
		{"/datasets/:id/export.csv", false},
		{"/static/:name", false},
		{"/favicon.ico", false},
		{"/healthz", false},
		{"/readyz", false},
		{"/metrics", false},
		{"/api/v1/runs", false},
		{"/api/v1/runs/:id/results", false},
	}
	for _, tc := range cases {
		if got := pageRoute(tc.path); got != tc.page {
			t.Errorf("pageRoute(%q) = %v, want %v", tc.path, got, tc.page)
		}
	}
}

// Every route the table registers is classified on purpose: a GET route
// that streams (events, downloads) must not be a page, or one slow
// download would hold a page's place for its whole length.
func TestPageRouteOfEveryStreamingRoute(t *testing.T) {
	h := &Handlers{}
	for _, r := range h.routes() {
		if r.Method != http.MethodGet || !pageRoute(r.Path) {
			continue
		}
		for _, streaming := range []string{"events", "export", ".csv", ".json", "report.html", "/api/"} {
			if strings.Contains(r.Path, streaming) {
				t.Errorf("GET %s is admitted as a page but looks like a stream or download (%q)", r.Path, streaming)
			}
		}
	}
}

// gateServer is an Echo server with one page and one non-page route, both
// blocking until release is closed, behind a gate of n.
// release is safe to call more than once; the test's cleanup calls it
// before closing the server, so a failed test does not hang on handlers
// still blocked.
func gateServer(t *testing.T, n int) (srv *httptest.Server, started chan string, release func()) {
	t.Helper()
	h := &Handlers{pages: newPageGate(n)}
	started = make(chan string, 16)
	released := make(chan struct{})
	release = sync.OnceFunc(func() { close(released) })
	block := func(c echo.Context) error {
		started <- c.Path()
		select {
		case <-released:
		case <-c.Request().Context().Done():
		}
		return c.String(http.StatusOK, "done")
	}
	e := echo.New()
	e.GET("/runs/:id", h.admitPages(http.MethodGet, "/runs/:id", block))
	e.GET("/runs/:id/events", h.admitPages(http.MethodGet, "/runs/:id/events", block))
	srv = httptest.NewServer(e)
	t.Cleanup(srv.Close)
	t.Cleanup(release) // runs first
	return srv, started, release
}

// slowWait bounds a wait for something that, on a working server, happens
// at once: a minute, because a passing run never waits that long and a
// loaded machine under -race can take seconds for what takes milliseconds
// alone.
const slowWait = time.Minute

func waitStarted(t *testing.T, started chan string, want string) {
	t.Helper()
	select {
	case got := <-started:
		if got != want {
			t.Fatalf("started %s, want %s", got, want)
		}
	case <-time.After(slowWait):
		t.Fatalf("%s did not start within %v", want, slowWait)
	}
}

func TestPageGateQueuesPagesOnly(t *testing.T) {
	srv, started, release := gateServer(t, 2)
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	get := func(path string) {
		defer wg.Done()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		codes <- resp.StatusCode
	}
	wg.Add(2)
	go get("/runs/1")
	go get("/runs/2")
	waitStarted(t, started, "/runs/:id")
	waitStarted(t, started, "/runs/:id")

	// The gate is full: a third page waits...
	wg.Add(1)
	go get("/runs/3")
	select {
	case p := <-started:
		t.Fatalf("%s started while two pages held the gate of 2", p)
	case <-time.After(200 * time.Millisecond):
	}
	// ...while a stream is not held back.
	wg.Add(1)
	go get("/runs/1/events")
	waitStarted(t, started, "/runs/:id/events")

	release()
	waitStarted(t, started, "/runs/:id")
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("status %d, want 200", c)
		}
	}
}

func TestPageGateBusyAnswers503(t *testing.T) {
	serialTest(t) // sets pageQueueWait
	old := pageQueueWait
	pageQueueWait = 100 * time.Millisecond
	t.Cleanup(func() { pageQueueWait = old })
	srv, started, _ := gateServer(t, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/runs/1")
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitStarted(t, started, "/runs/:id")

	resp, err := http.Get(srv.URL + "/runs/2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 after waiting longer than the queue allows", resp.StatusCode)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

// A client that gives up while queued leaves no place taken: afterwards
// the gate still admits its full number at once.
func TestPageGateCancelledWaiterFreesNothing(t *testing.T) {
	g := newPageGate(2)
	r1, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		if _, err := g.enter(ctx); err == nil {
			t.Fatal("entered a full gate")
		}
		cancel()
	}
	r1()
	r2()
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), slowWait)
		if _, err := g.enter(ctx); err != nil {
			t.Fatalf("gate of 2 refused after cancelled waiters: %v", err)
		}
		cancel()
	}
}

func TestPageGateSetting(t *testing.T) {
	for _, tc := range []struct {
		setting int
		want    int64 // places; 0 = no gate
	}{
		{0, int64(DefaultPageConcurrency())},
		{3, 3},
		{-1, 0},
	} {
		h := &Handlers{PageConcurrency: tc.setting}
		h.pages = newPageGate(pageConcurrencyOf(h.PageConcurrency))
		if tc.want == 0 {
			if h.pages != nil {
				t.Errorf("PageConcurrency %d: gate built, want none", tc.setting)
			}
			continue
		}
		if h.pages == nil {
			t.Fatalf("PageConcurrency %d: no gate", tc.setting)
		}
		// Exactly want places: want entries succeed, one more does not.
		for i := range tc.want {
			if !h.pages.sem.TryAcquire(1) {
				t.Fatalf("PageConcurrency %d: entry %d refused", tc.setting, i+1)
			}
		}
		if h.pages.sem.TryAcquire(1) {
			t.Errorf("PageConcurrency %d: more than %d places", tc.setting, tc.want)
		}
	}
}

// A client that does not read its page does not keep its place: the page
// is drawn inside the gate and sent after leaving it.
func TestPageGateSlowReaderHoldsNoPlace(t *testing.T) {
	h := &Handlers{pages: newPageGate(1)}
	big := strings.Repeat("x", 64<<20) // more than the sockets buffer
	e := echo.New()
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true}))
	e.GET("/runs/:id", h.admitPages(http.MethodGet, "/runs/:id", func(c echo.Context) error {
		switch c.Param("id") {
		case "1":
			return c.HTML(http.StatusOK, big)
		case "panic":
			panic("handler bug")
		}
		return c.HTML(http.StatusOK, "small")
	}))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	// The slow reader: asks for the big page and never reads it.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("GET /runs/1 HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// Wait until the page is being sent: its status line arrives only
	// after the page was drawn and its place given up (heldPage sends on
	// leaving the gate). Reading that one line leaves the rest of the 64
	// MB unread, so the server stays stuck sending. No fixed sleep: on a
	// loaded machine under -race drawing 64 MB took longer than any guess.
	if err := conn.SetReadDeadline(time.Now().Add(slowWait)); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("slow reader's page did not start sending within %v: %v", slowWait, err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("slow reader's status line %q, want 200", status)
	}
	for _, path := range []string{"/runs/panic", "/runs/2"} {
		done := make(chan int, 1)
		go func() {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		select {
		case code := <-done:
			if path == "/runs/2" && code != http.StatusOK {
				t.Errorf("GET %s: %d", path, code)
			}
		case <-time.After(slowWait):
			t.Fatalf("GET %s waited %v behind a client that does not read (or a panicked page kept its place)", path, slowWait)
		}
	}
}
