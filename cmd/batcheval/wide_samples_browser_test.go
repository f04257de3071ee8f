package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserManyRoundsDoNotWidenThePage: a run of many rounds has a
// samples table wider than the window (a column a round), which scrolls
// inside its card. A sample without a human rating writes "not rated" with
// its reason in visually hidden text; that text, absolutely positioned, was
// placed against the page instead of the card, so the whole page scrolled
// sideways to the table's far right (3,300 px for 50 rounds).
func TestBrowserManyRoundsDoNotWidenThePage(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}

	file := filepath.Join(t.TempDir(), "unrated.csv")
	data := "id,context,response,engaging,coherent\n" +
		"u1,User: hi,Hello! How can I help you today?,3,3\n" +
		"u2,User: any plans?,Not really.,,2\n" +
		"u3,User: a joke?,Why did the chicken cross the road? To get to the other side.,2,3\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("upload", chromedp.Navigate(base+"/projects/1/datasets/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{file}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	b.do("import", chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rows"]`)))
	dataset := strings.TrimPrefix(b.location(), base+"/datasets/")
	if dataset == "" || strings.Contains(dataset, "/") {
		t.Fatalf("the import did not open a dataset page: %s", b.location())
	}

	// 25 rounds: well past the 1280 px window (12 rounds fit in it, 18 no
	// longer did); 50 proved the same in 4 more seconds.
	b.do("launch", chromedp.Navigate(base+"/projects/1/runs/new?dataset="+dataset),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "25"),
		chromedp.SetValue(chromedp.CSS(`input[name="batch_size"]`), "2"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)))
	b.waitFor("the run to finish", `((document.querySelector('[data-testid="run-status"]') || {}).textContent || "").includes("succeeded") && !!document.querySelector('[data-testid="samples"] table')`)
	// The page reloads itself when the run ends: measure a page loaded
	// after that, not one being replaced.
	b.do("run page", chromedp.Navigate(b.location()), chromedp.WaitVisible(chromedp.CSS(`[data-testid="samples"] table`)))

	if got := b.eval(`String(document.querySelector('[data-testid="samples"] table').getBoundingClientRect().width > document.documentElement.clientWidth)`); got != "true" {
		t.Fatalf("the samples table of 25 rounds fits the window: nothing to scroll")
	}
	if got := b.eval(`String(document.querySelectorAll('[data-testid="samples"] .sr-only').length)`); got == "0" {
		t.Fatalf("the samples table holds no visually hidden reason for the missing rating")
	}
	noPageScroll(t, ctx, "run of 25 rounds")
}
