package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserPreviewAfterSessionExpired: the rubric page's live prompt
// preview renders what is typed while the session lasts; once the session
// is gone (its cookie deleted, as when it expires), the next preview shows
// a short plain message instead of the sign-in error page pasted inside
// the preview box (QA).
func TestBrowserPreviewAfterSessionExpired(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}
	// The first account: from now on a request needs its session.
	b.do("setup", chromedp.Navigate(base+"/setup"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="setup-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#name`), "Ada"),
		chromedp.SetValue(chromedp.CSS(`#email`), "ada@example.test"),
		chromedp.SetValue(chromedp.CSS(`#password`), "a long and careful passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="setup-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-user"]`)))
	b.do("new rubric", chromedp.Navigate(base+"/projects/1/rubrics/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rubric-form"]`)))
	// typeTask writes the task description as a person types it (an
	// input event starts the debounced preview).
	typeTask := func(text string) {
		t.Helper()
		b.eval(`(function () { var e = document.getElementById("rubric-task"); e.value = ` + strconv.Quote(text) + `; e.dispatchEvent(new Event("input", { bubbles: true })); return ""; })()`)
	}
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
				t.Fatalf("gave up waiting for %s (%v); the preview holds: %s", what, err, b.eval(`document.getElementById("prompt-preview").innerHTML`))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	b.do("name the criterion", chromedp.SetValue(chromedp.CSS(`[id="criteria[0].name"]`), "Kindness"))
	typeTask("Judge the replies of a <b>kind</b> assistant.")
	until("the live preview", `Array.from(document.querySelectorAll('#prompt-preview [data-testid="prompt-message"]')).some(function (m) { return m.textContent.includes("a <b>kind</b> assistant") })`)

	// The session ends: its cookie is gone, as after it expires.
	if _, err := chromedp.Call(ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: "batcheval_session", URL: base}); err != nil {
		t.Fatalf("delete the session cookie: %v", err)
	}
	typeTask("Judge the replies of a patient assistant.")
	until("the preview's message", `!!document.querySelector('#prompt-preview [data-testid="fetch-failed"]')`)
	got := b.text(`#prompt-preview`)
	if !strings.Contains(got, "The preview could not be loaded") || !strings.Contains(got, "reload the page") {
		t.Errorf("after the session ended the preview reads %q, want the plain message to reload", got)
	}
	// Only the message: no page (heading, navigation, form) inside the box.
	if n := b.eval(`String(document.querySelectorAll('#prompt-preview *').length)`); n != "1" {
		t.Errorf("the preview box holds %s elements after the session ended, want only the message: %s", n, b.eval(`document.getElementById("prompt-preview").innerHTML`))
	}

	// The launch form: its estimate and the parts that follow a select
	// (fetched as a whole page) say the same once the session is gone.
	b.do("sign in again", chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#email`), "ada@example.test"),
		chromedp.SetValue(chromedp.CSS(`#password`), "a long and careful passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="login-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-user"]`)))
	b.do("launch form", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)))
	if _, err := chromedp.Call(ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: "batcheval_session", URL: base}); err != nil {
		t.Fatalf("delete the session cookie: %v", err)
	}
	b.eval(`(function () { document.getElementById("judge").dispatchEvent(new Event("change", { bubbles: true })); return ""; })()`)
	until("the launch form's messages", `!!document.querySelector('#judge ~ [data-testid="fetch-failed"]') && !!document.querySelector('#estimate [data-testid="fetch-failed"]')`)
	if got := b.text(`#estimate`); !strings.Contains(got, "The preview could not be loaded") {
		t.Errorf("after the session ended the estimate reads %q, want the plain message", got)
	}
	if got := b.text(`#judge ~ [data-testid="fetch-failed"]`); !strings.Contains(got, "reload the page") {
		t.Errorf("after the session ended the judge's choice says %q, want the plain message", got)
	}
	if n := b.eval(`String(document.querySelectorAll('main h1').length)`); n != "1" {
		t.Errorf("the launch page holds %s h1 headings after the session ended, want its own only", n)
	}
}
