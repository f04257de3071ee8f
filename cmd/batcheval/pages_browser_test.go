package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// browserSteps are the small helpers every browser test repeats, bound to
// one tab.
type browserSteps struct {
	t   *testing.T
	ctx context.Context
}

func (b browserSteps) do(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	// A step bounded on its own: one that waits for an element that never
	// comes (a click lost on a busy machine) fails with its name, instead
	// of holding the package for the tab's 25 minutes.
	// The tab is opened first on the tab's own context: chromedp ties a
	// tab to the context of the first Run on it, and the step's would
	// close it at the step's end.
	if c := chromedp.FromContext(b.ctx); c != nil && c.Target == nil {
		if err := chromedp.Do(b.ctx); err != nil {
			b.t.Fatalf("%s: open the tab: %v", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
}

// browserStepTimeout bounds one step of a browser test.
const browserStepTimeout = 2 * time.Minute

func (b browserSteps) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

func (b browserSteps) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return s
}

func (b browserSteps) location() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// waitFor reloads the page until js is true (a run finishing), failing the
// test when the tab's time runs out.
func (b browserSteps) waitFor(what, js string) {
	b.t.Helper()
	for i := 0; ; i++ {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if b.ctx.Err() != nil {
			b.t.Fatalf("gave up waiting for %s (%v)", what, err)
		}
		time.Sleep(500 * time.Millisecond)
		if i%6 == 5 {
			_ = chromedp.Do(b.ctx, chromedp.Reload())
		}
	}
}

// pageCheck looks at the page the tab shows: axe-core, a screenshot, and
// at phone width no sideways page scroll.
func pageCheck(t *testing.T, ctx context.Context, name string, phone bool) {
	t.Helper()
	everyPageWalk{shots: true}.check(t, ctx, name, phone)
}

// everyPageWalk is how TestBrowserEveryPage walks: on which database, and
// whether it takes screenshots and walks the dark theme too.
type everyPageWalk struct {
	// db is the server's database: a SQLite file or a postgres:// URL.
	db string
	// shots writes a screenshot of every page checked (test-artifacts).
	shots bool
	// dark walks every page again in the dark theme (contrast rules only).
	dark bool
}

// check is pageCheck for this walk: axe-core, a screenshot when the walk
// takes them, and at phone width no sideways page scroll.
func (w everyPageWalk) check(t *testing.T, ctx context.Context, name string, phone bool) {
	t.Helper()
	checkAxe(t, ctx, name)
	if w.shots {
		screenshot(t, ctx, name)
	}
	if phone {
		noPageScroll(t, ctx, name)
	}
}

// TestBrowserEveryPage opens every kind of page on a fresh server with the
// demo project and an experiment of every method, in light and dark mode
// and on a 390 px phone, and checks each with axe-core (no serious or
// critical violation), takes a screenshot, and on the phone asserts the
// page does not scroll sideways. With BATCHEVAL_README_SHOTS set it also
// writes the README's pictures there (make screenshots).
func TestBrowserEveryPage(t *testing.T) {
	t.Parallel() // beside its PostgreSQL twin and the package's other parallel tests
	everyPage(t, everyPageWalk{db: filepath.Join(t.TempDir(), "b.db"), shots: true, dark: true})
}

// TestBrowserEveryPageOnPostgres is TestBrowserEveryPage with the server
// on PostgreSQL (TEST_DATABASE_URL, which `make test` sets): every page
// in light mode and on a phone, each checked with axe-core, and the
// account pages. The dark theme changes colours only, not what the
// database gives a page, and the screenshots are the SQLite walk's, so
// this walk leaves both out; it runs beside the package's other parallel
// tests (BENCHMARKS.md, tests45, gives its cost).
func TestBrowserEveryPageOnPostgres(t *testing.T) {
	dsn := dbtest.DSN(t, models.Postgres)
	t.Parallel()
	everyPage(t, everyPageWalk{db: dsn})
}

func everyPage(t *testing.T, w everyPageWalk) {
	ctx := newTab(t)
	base := startServerAt(t, w.db)
	b := browserSteps{t, ctx}

	// Every method on the demo data, in one experiment.
	b.do("launch all methods", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.Click(chromedp.CSS(`[data-testid="launch-all"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="experiment-table"]`)),
	)
	expURL := b.location()
	b.waitFor("every run of the experiment to finish",
		`!document.querySelector('[data-testid="running-note"]') && document.querySelectorAll('[data-testid="experiment-row"]').length > 1`)
	runs := strings.Fields(b.eval(`Array.from(document.querySelectorAll('[data-testid="experiment-row"] td:first-child a')).map(a => a.getAttribute('href')).join(' ')`))
	if len(runs) < 2 {
		t.Fatalf("experiment has %d runs, want every method", len(runs))
	}
	runURL := base + runs[0]
	b.do("run page", chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="scatter"]`)))
	sampleURL := base + b.eval(`document.querySelector('[data-testid="scatter-point"]').getAttribute('href')`)
	b.do("sample page", chromedp.Navigate(sampleURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	batchURL := base + b.eval(`document.querySelector('a[href*="/batches/"]').getAttribute('href')`)
	compareURL := fmt.Sprintf("%s/compare?a=%s&b=%s", base, strings.TrimPrefix(runs[0], "/runs/"), strings.TrimPrefix(runs[1], "/runs/"))
	datasetURL := base + b.eval(`(document.querySelector('a[href^="/datasets/"]') || {getAttribute: () => "/datasets/1"}).getAttribute('href')`)

	if dir := os.Getenv("BATCHEVAL_README_SHOTS"); dir != "" && w.shots {
		readmeShots(t, ctx, dir, runURL, base+expURLPath(expURL))
	}

	pages := []struct{ name, url string }{
		{"home", base + "/"},
		{"project", base + "/projects/1"},
		{"datasets", base + "/projects/1/datasets/new"},
		{"dataset", datasetURL},
		{"rubric", base + "/rubrics/1/edit"},
		{"judges", base + "/judges"},
		{"judge-form", base + "/judges/new?preset=OpenAI"},
		{"new-rubric", base + "/projects/1/rubrics/new"},
		{"launch", base + "/projects/1/runs/new"},
		{"runs", base + "/runs"},
		{"run", runURL},
		{"sample", sampleURL},
		{"batch", batchURL},
		{"experiments", base + "/projects/1/experiments"},
		{"experiment", base + expURLPath(expURL)},
		{"compare", compareURL},
		{"shares", base + "/shares"},
		{"tokens", base + "/tokens"},
		{"settings", base + "/settings/webhook"},
		{"trash", base + "/trash"},
		{"audit", base + "/audit"},
		{"setup", base + "/setup"},
	}
	modes := []struct {
		name   string
		scheme string
		width  int64
	}{
		{"light", "light", tabWidth},
		{"dark", "dark", tabWidth},
		{"phone", "light", 390},
	}
	for _, m := range modes {
		if m.scheme == "dark" && !w.dark {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			setColorScheme(t, ctx, m.scheme)
			setWidth(t, ctx, m.width)
			for _, p := range pages {
				if err := chromedp.Do(ctx, chromedp.Navigate(p.url), chromedp.WaitVisible(chromedp.CSS(`main`))); err != nil {
					t.Fatalf("open %s: %v", p.name, err)
				}
				name := "page-" + p.name + "-" + m.name
				if m.scheme == "dark" {
					// Light mode checked every rule; dark mode changes colours only.
					checkAxeRules(t, ctx, name, "color-contrast", "link-in-text-block")
					screenshot(t, ctx, name)
					continue
				}
				w.check(t, ctx, name, m.width < 600)
			}
		})
	}
	setColorScheme(t, ctx, "light")

	// At 1400 px the experiment table fits its card: cost, calls and
	// failures are in view without scrolling.
	setWidth(t, ctx, 1400)
	b.do("experiment at 1400 px", chromedp.Navigate(base+expURLPath(expURL)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="experiment-table"]`)))
	if fits := b.eval(`(() => { const box = document.querySelector('[data-testid="experiment-table"]').parentElement; return String(box.scrollWidth <= box.clientWidth + 1) })()`); fits != "true" {
		t.Errorf("at 1400 px the experiment table is wider than its card")
	}
	setWidth(t, ctx, tabWidth)

	// The theme toggle: with script it switches at once and the choice
	// outlives a reload (a cookie the server reads).
	b.do("toggle to dark", chromedp.Navigate(base+"/judges"), chromedp.Click(chromedp.CSS(`[data-testid="theme-toggle"] button`)))
	if got := b.eval(`document.documentElement.getAttribute("data-theme") || ""`); got != "dark" {
		t.Errorf("after the toggle <html data-theme> is %q, want dark", got)
	}
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`main`)))
	if got := b.eval(`document.documentElement.getAttribute("data-theme") || ""`); got != "dark" {
		t.Errorf("after a reload <html data-theme> is %q, want dark (from the cookie)", got)
	}
	if bg := b.eval(`getComputedStyle(document.body).backgroundColor`); bg == "rgb(247, 248, 251)" {
		t.Errorf("dark theme chosen but the page background is still light (%s)", bg)
	}
	w.check(t, ctx, "page-judges-toggled-dark", false)

	// Accounts: the first account from the setup page, then the pages of
	// a signed-in owner, and the sign-in page in a fresh browser.
	b.do("setup", chromedp.Navigate(base+"/setup"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="setup-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#name`), "Ada"),
		chromedp.SetValue(chromedp.CSS(`#email`), "ada@example.test"),
		chromedp.SetValue(chromedp.CSS(`#password`), "a long and careful passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="setup-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-user"]`)),
	)
	for _, p := range []struct{ name, path string }{{"account", "/account"}, {"members", "/members"}, {"audit", "/audit"}, {"tokens-signed-in", "/tokens"}} {
		b.do("open "+p.name, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(`main`)))
		w.check(t, ctx, "page-"+p.name, false)
	}
	// A refused password change: the message beside its field.
	b.do("password change refused", chromedp.Navigate(base+"/account"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="password-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#current_password`), "not the passphrase"),
		chromedp.SetValue(chromedp.CSS(`#new_password`), "another careful passphrase"),
		chromedp.SetValue(chromedp.CSS(`#new_password_again`), "another careful passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="password-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="field-error-current_password"]`)),
	)
	w.check(t, ctx, "page-account-password-refused", false)
	// The display name: a refused one (too long; maxlength stops only
	// typing) beside its field, then a change the header shows at once.
	b.do("name change refused", chromedp.Navigate(base+"/account"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="name-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#display_name`), strings.Repeat("a", 201)),
		chromedp.Click(chromedp.CSS(`[data-testid="name-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="field-error-display_name"]`)),
	)
	w.check(t, ctx, "page-account-name-refused", false)
	b.do("name changed", chromedp.SetValue(chromedp.CSS(`#display_name`), "Ada <Lovelace>"),
		chromedp.Click(chromedp.CSS(`[data-testid="name-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)),
	)
	if got := b.eval(`document.querySelector('[data-testid="nav-user"]').textContent`); !strings.Contains(got, "Ada <Lovelace>") {
		t.Errorf("after the name change the header says %q, want the new name as typed", got)
	}
	visitor := newTab(t)
	for _, m := range modes {
		setColorScheme(t, visitor, m.scheme)
		setWidth(t, visitor, m.width)
		if err := chromedp.Do(visitor, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name="password"]`))); err != nil {
			t.Fatalf("sign-in page: %v", err)
		}
		w.check(t, visitor, "page-login-"+m.name, m.width < 600)
	}
}

// expURLPath is the path of an address.
func expURLPath(u string) string {
	if i := strings.Index(u, "//"); i >= 0 {
		if j := strings.Index(u[i+2:], "/"); j >= 0 {
			return u[i+2+j:]
		}
	}
	return u
}

// readmeShots writes the README's two pictures into dir: a run's results
// (docs/screenshot.png) and the experiment of every method
// (docs/experiment.png), at the size the README shows them.
func readmeShots(t *testing.T, ctx context.Context, dir, runURL, expURL string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shots := []struct {
		file, url string
		height    int64
	}{
		{"screenshot.png", runURL, 1500},
		{"experiment.png", expURL, 1100},
	}
	for _, s := range shots {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(tabWidth, s.height), chromedp.Navigate(s.url), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if err != nil {
			t.Fatalf("%s: %v", s.file, err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("%s: %v", s.file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(tabWidth, tabHeight)); err != nil {
		t.Fatal(err)
	}
}
