package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/models"
)

// TestBrowserRunPageWithoutItsStream: when the server refuses the run
// page's progress stream (429: the account has too many open), the page
// says its figures refresh without it, and does refresh them from the
// page every 10 seconds, and loads the whole page once the run is no
// longer going. Before, it said "Live progress stopped" and its figures
// stayed as they were until a reload by hand.
func TestBrowserRunPageWithoutItsStream(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "b.db")
	base := startServerAt(t, dbPath)

	// A tab of the shared Chromium (it started one of its own before).
	ctx, cancelT := context.WithTimeout(newTab(t), 3*time.Minute)
	defer cancelT()
	b := browserSteps{t, ctx}
	step := b.do

	step("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "refused stream run"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	db, err := models.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var run models.Run
	for {
		if err := db.Gorm.Order("id DESC").First(&run).Error; err == nil && run.Finished() {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the run did not finish")
		}
		time.Sleep(200 * time.Millisecond)
	}
	set := func(status string, done int) {
		t.Helper()
		if err := db.Gorm.Exec(`UPDATE runs SET status = ?, batches_done = ? WHERE id = ?`, status, done, run.ID).Error; err != nil {
			t.Fatal(err)
		}
	}
	// The run's state while it goes on, without a runner moving it.
	set(models.RunRunning, 0)

	// Every progress stream of the tab is refused as the server refuses
	// one too many: 429 with Retry-After.
	paused := make(chan fetch.RequestID, 64)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case paused <- e.RequestID:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	refusals := make(chan int, 64)
	go func() {
		for id := range paused {
			err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: id, ResponseCode: 429,
					ResponseHeaders: []*fetch.HeaderEntry{{Name: "Retry-After", Value: "15"}, {Name: "Content-Type", Value: "text/plain"}},
					Body:            []byte("too many progress streams")})
				return err
			}))
			if err == nil {
				refusals <- 1
			}
		}
	}()
	defer close(paused)
	step("refuse the streams", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/events"}}})
		return err
	}))

	// The page polls every 10 seconds (static/app.js); the test's tab
	// waits 250ms instead (was two real 10-second waits): its pages' 10 s
	// timers are shortened before any script of theirs runs. What the page
	// says and does is the page's own.
	step("shorten the page's 10 s poll", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(function () {
  var later = window.setTimeout;
  window.setTimeout = function (f, ms) {
    var rest = Array.prototype.slice.call(arguments, 2);
    return later.apply(window, [f, ms === 10000 ? 250 : ms].concat(rest));
  };
})();`})
		return err
	}))

	ended := chromedp.CSS(`[data-testid="stream-ended"]`)
	done := chromedp.CSS(`[data-testid="progress"] [data-field="batches_done"]`)
	step("open the run", chromedp.Navigate(loc), chromedp.WaitVisible(ended))
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	if got := text(ended); !strings.Contains(got, "refresh every 10 seconds") {
		t.Fatalf("the page without its stream says %q, want that it refreshes its figures", got)
	}
	if len(refusals) == 0 {
		t.Fatal("no stream was refused")
	}
	if got := text(done); got != "0" {
		t.Fatalf("batches done %q, want 0", got)
	}
	set(models.RunRunning, 1)
	waitText := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 40 s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitText("the figures refreshed without a stream", func() bool { return text(done) == "1" })
	if got := text(ended); !strings.Contains(got, "refresh every 10 seconds") {
		t.Errorf("after a refresh the page says %q, want that it refreshes its figures", got)
	}

	// The run ends: the next refresh loads the whole page, which no
	// longer follows it.
	set(models.RunSucceeded, 1)
	waitText("the page reloaded once the run ended", func() bool {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-run-events]').length`))
		return err == nil && n == 0
	})
}
