package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/static"
)

// previewOrderPage is a page with the two kinds of live parts static/app.js
// drives, as the rubric editor and the launch form use them: a form that
// previews itself (data-preview-url) and a select whose parts follow it
// (data-refresh-url).
const previewOrderPage = `<!doctype html><html><head><script src="/app.js" defer></script></head><body>
<form id="f" data-preview-url="/preview" data-preview-target="out">
<input id="text" name="text">
<select id="choice" name="choice" data-refresh-url="/parts" data-refresh-parts="part">
<option value="a">a</option><option value="b">b</option><option value="c">c</option><option value="refused">refused</option></select>
</form>
<div id="out"></div><div id="part">none</div>
</body></html>`

// slowFirstServer serves previewOrderPage, the real app.js and answers to
// its two live parts. The answer to the preview of "slow" (and to the
// select's choice b) waits until the test closes its release, after the
// answer to a later request was shown; arrived says it came in.
// Other texts answer at once, as the server would: "refused" is a marked
// 422 whose sentence holds markup, "page" an unmarked 422 (an error page),
// "<anything else>" a marked fragment quoting the text.
type slowFirstServer struct {
	previewArrived, previewRelease chan struct{}
	partsArrived, partsRelease     chan struct{}
}

func (s *slowFirstServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, previewOrderPage)
	case "/app.js":
		js, err := fs.ReadFile(static.FS, "app.js")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		w.Write(js)
	case "/preview":
		text := r.FormValue("text")
		switch text {
		case "slow":
			close(s.previewArrived)
			<-s.previewRelease
		case "refused":
			w.Header().Set("X-Batcheval-Fragment", "1")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `<p class="error-text">field “text”: &lt;b&gt;bold&lt;/b&gt; is not allowed; remove it</p>`)
			return
		case "page":
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `<!doctype html><html><body><h1>Unprocessable</h1><nav>menu</nav></body></html>`)
			return
		}
		w.Header().Set("X-Batcheval-Fragment", "1")
		fmt.Fprintf(w, `<p id="answer">answer to %s</p>`, strings.ReplaceAll(text, "<", "&lt;"))
	case "/parts":
		choice := r.URL.Query().Get("choice")
		switch choice {
		case "b":
			close(s.partsArrived)
			<-s.partsRelease
		case "refused":
			w.Header().Set("X-Batcheval-Fragment", "1")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `<p class="error-text">project 9 &lt;i&gt;does not exist&lt;/i&gt;</p>`)
			return
		}
		fmt.Fprintf(w, `<html><body><div id="part">parts of %s</div></body></html>`, choice)
	default:
		http.NotFound(w, r)
	}
}

// TestBrowserLivePreviewShowsTheLatestAnswer: with two live previews in
// flight, the answer to the older request came back last and replaced the
// newer one (typing "slow" then "fast" ended on the preview of "slow").
// The server here holds the first answer until the second was shown; the
// preview must still show the second once the first has arrived. The same
// for a select's parts (choosing b, then c, ended on b's parts). And a
// refusal the server marks as a fragment (4xx with X-Batcheval-Fragment)
// shows the server's sentence as text, where the generic "could not be
// loaded" was shown; an unmarked refusal (an error page) keeps it.
func TestBrowserLivePreviewShowsTheLatestAnswer(t *testing.T) {
	chromiumPath(t)
	slow := &slowFirstServer{previewArrived: make(chan struct{}), previewRelease: make(chan struct{}),
		partsArrived: make(chan struct{}), partsRelease: make(chan struct{})}
	srv := httptest.NewServer(slow)
	defer srv.Close()
	var releases sync.Map // each release closed once, here or when the test ends
	release := func(ch chan struct{}) {
		if _, was := releases.LoadOrStore(ch, true); !was {
			close(ch)
		}
	}
	defer release(slow.partsRelease)
	defer release(slow.previewRelease)
	ctx := newTab(t)
	b := browserSteps{t, ctx}
	b.do("page", chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(`#out`)))
	// until polls the page (no reload, which would lose what was typed).
	until := func(what, js string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			if err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s (%v); the preview holds %q, the parts %q", what, err,
					b.eval(`document.getElementById("out").innerHTML`), b.eval(`document.getElementById("part").innerHTML`))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	typeText := func(text string) {
		t.Helper()
		b.eval(`(function () { var e = document.getElementById("text"); e.value = ` + strconv.Quote(text) + `; e.dispatchEvent(new Event("input", { bubbles: true })); return ""; })()`)
	}
	// done counts the fetches of path the browser has received whole.
	done := func(path string, n int) string {
		return fmt.Sprintf(`performance.getEntriesByType("resource").filter(function (e) { return new URL(e.name).pathname === %q && e.responseEnd > 0; }).length >= %d`, path, n)
	}
	// settled: the answers received have gone through the script's
	// promise chain (a few turns of the event loop after the last one).
	settled := func() {
		t.Helper()
		js := `new Promise(function (ok) { setTimeout(function () { requestAnimationFrame(function () { setTimeout(function () { ok(""); }, 50); }); }, 0); })`
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("let the page settle: %v", err)
		}
	}

	// The preview: "slow" is held, "fast" answered at once and shown.
	typeText("slow")
	select {
	case <-slow.previewArrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the preview of \"slow\" never reached the server")
	}
	typeText("fast")
	until("the preview of the second text", `(document.getElementById("out").textContent || "").includes("answer to fast")`)
	release(slow.previewRelease)
	until("both previews received", done("/preview", 2))
	settled()
	if got := b.text(`#out`); got != "answer to fast" {
		t.Errorf("after the older preview's answer arrived last, the preview reads %q, want the latest's %q", got, "answer to fast")
	}

	// The select: b is held, c answered at once and kept.
	b.eval(`(function () { var s = document.getElementById("choice"); s.value = "b"; s.dispatchEvent(new Event("change", { bubbles: true })); return ""; })()`)
	select {
	case <-slow.partsArrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the parts of choice b were never asked for")
	}
	b.eval(`(function () { var s = document.getElementById("choice"); s.value = "c"; s.dispatchEvent(new Event("change", { bubbles: true })); return ""; })()`)
	until("the parts of the second choice", `document.getElementById("part").textContent === "parts of c"`)
	release(slow.partsRelease)
	until("both parts received", done("/parts", 2))
	settled()
	if got := b.text(`#part`); got != "parts of c" {
		t.Errorf("after the older choice's answer arrived last, the parts read %q, want the latest's %q", got, "parts of c")
	}

	// A marked refusal of a select's parts: the server's sentence, as
	// text, after the select, and the parts as they were.
	b.eval(`(function () { var s = document.getElementById("choice"); s.value = "refused"; s.dispatchEvent(new Event("change", { bubbles: true })); return ""; })()`)
	until("the parts' refusal", `!!document.querySelector('#choice ~ [data-testid="fetch-failed"]')`)
	if got, want := b.text(`#choice ~ [data-testid="fetch-failed"]`), "project 9 <i>does not exist</i>"; got != want {
		t.Errorf("a marked 404 of the parts reads %q, want the server's sentence %q", got, want)
	}
	if got := b.text(`#part`); got != "parts of c" {
		t.Errorf("after a refusal the parts read %q, want them kept (%q)", got, "parts of c")
	}

	// A marked refusal: the server's sentence, as text.
	typeText("refused")
	until("the refusal", `!!document.querySelector('#out [data-testid="preview-refused"]')`)
	if got, want := b.text(`#out [data-testid="preview-refused"]`), "field “text”: <b>bold</b> is not allowed; remove it"; got != want {
		t.Errorf("a marked 422 reads %q, want the server's sentence %q", got, want)
	}
	if n := b.eval(`String(document.querySelectorAll("#out b, #out [data-testid=fetch-failed]").length)`); n != "0" {
		t.Errorf("a marked 422 pasted markup or the generic sentence (%s elements): %s", n, b.eval(`document.getElementById("out").innerHTML`))
	}
	// An unmarked refusal (an error page): the generic sentence, no page.
	typeText("page")
	until("the generic sentence", `!!document.querySelector('#out [data-testid="fetch-failed"]')`)
	if got := b.text(`#out`); !strings.Contains(got, "The preview could not be loaded") || strings.Contains(got, "Unprocessable") {
		t.Errorf("an unmarked 422 reads %q, want only the generic sentence", got)
	}
}
