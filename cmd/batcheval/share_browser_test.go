package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserShareLink: an owner makes a share link to a finished run; a
// fresh, logged-out browser context opens it and reads the report and a
// sample's analyses, with no form and no way into the dashboard; after the
// owner revokes it, the same address is refused.
func TestBrowserShareLink(t *testing.T) {
	owner := newTab(t)
	base := startServer(t)

	step := func(ctx context.Context, name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	text := func(ctx context.Context, sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	count := func(ctx context.Context, js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return n
	}

	// The first account: from now on nothing opens without signing in.
	step(owner, "setup", chromedp.Navigate(base+"/setup"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="setup-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#name`), "Ada"),
		chromedp.SetValue(chromedp.CSS(`#email`), "ada@example.test"),
		chromedp.SetValue(chromedp.CSS(`#password`), "a long and careful passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="setup-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-user"]`)),
	)

	// A short run on the demo data and the simulated judge.
	step(owner, "launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "run for the manager"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	runPage, err := chromedp.Run(owner, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	// The page reloads itself when the run ends (server-sent events), so
	// read the status without navigating, tolerating a read that meets the
	// reload, and open the page afresh now and then in case an event was
	// missed.
	for i := 1; ; i++ {
		status, err := chromedp.Run(owner, chromedp.Evaluate[string](`(document.querySelector('[data-testid="run-status"]') || {}).textContent || ""`))
		if err == nil && strings.Contains(status, "succeeded") {
			break
		}
		if owner.Err() != nil {
			t.Fatalf("run did not succeed (status %q, %v)", status, err)
		}
		time.Sleep(300 * time.Millisecond)
		if i%15 == 0 {
			_ = chromedp.Do(owner, chromedp.Navigate(runPage))
		}
	}
	step(owner, "run page", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-link"]`)))

	// Share it from the run page.
	step(owner, "share", chromedp.Click(chromedp.CSS(`[data-testid="share-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-run-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="share-run-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-url"]`)),
	)
	link := strings.TrimSpace(text(owner, `[data-testid="share-url"]`))
	if !strings.HasPrefix(link, base+"/s/") {
		t.Fatalf("share link %q", link)
	}

	// A fresh browser context: no cookie of the owner's.
	visitor := newTab(t)
	step(visitor, "dashboard logged out", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name="password"]`)))
	step(visitor, "open link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="criterion-card"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="scatter"]`)))
	if got := text(visitor, `main`); !strings.Contains(got, "run for the manager") || !strings.Contains(got, "Pearson") {
		t.Errorf("shared report: %.300q", got)
	}
	if n := count(visitor, `document.forms.length + document.querySelectorAll('script, input, button').length`); n != 0 {
		t.Errorf("shared report holds %d forms, inputs, buttons or scripts", n)
	}
	// SVG links (the scatter's points) count too: read the attribute.
	outside := `Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href')).filter(h => !(h.startsWith('#') || new URL(h, location.href).href.startsWith(location.origin + location.pathname))).length`
	if n := count(visitor, outside); n != 0 {
		t.Errorf("shared report has %d links outside the share link", n)
	}
	step(visitor, "open a sample", chromedp.Click(chromedp.CSS(`[data-testid="sample-row"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	if got := text(visitor, `[data-testid="analysis"]`); strings.TrimSpace(got) == "" {
		t.Error("the shared sample's analysis is empty")
	}

	// The owner revokes it; the visitor's link is refused.
	step(owner, "revoke", chromedp.Navigate(base+"/shares"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-revoke"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="share-revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)),
	)
	step(visitor, "open revoked link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-message"]`)))
	if got := text(visitor, `main`); !strings.Contains(got, "does not open anything") || strings.Contains(got, "run for the manager") {
		t.Errorf("revoked link shows: %.300q", got)
	}
}
