package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// alignBrowser starts the program and a browser for the alignment test.
// It is kept apart so the shared one-Chromium harness can replace it.
func alignBrowser(t *testing.T) (context.Context, string) {
	t.Helper()
	base := startServer(t)
	return newTab(t), base
}

// TestBrowserAlignJudge: from a finished run on the simulated judge, a
// person splits the data and gets a draft, tries to use a held-out sample
// as an example and is refused, accepts the draft as a new rubric version
// and reads the held-out before/after with its interval; the rubric's
// versions page lists the runs with their versions.
func TestBrowserAlignJudge(t *testing.T) {
	ctx, base := alignBrowser(t)
	b := browserSteps{t, ctx}
	step := b.do
	eval := b.eval
	// waitFor reloads the current page until the selector is on it (the
	// runs finish in the background; the page may also reload itself, so a
	// failed reload is not an error here).
	waitFor := func(name, sel string) {
		t.Helper()
		b.waitFor(name, `!!document.querySelector('`+sel+`')`)
	}

	step("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	waitFor("run finishes", `[data-testid="align-link"]`)
	step("open alignment", chromedp.Click(chromedp.CSS(`[data-testid="align-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="align-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#seed`), "5"),
		chromedp.Click(chromedp.CSS(`[data-testid="align-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="draft-form"]`)),
	)
	if split := eval(`document.querySelector('[data-testid="split"]').textContent`); !strings.Contains(split, "seed 5") || !strings.Contains(split, "15 calibration samples") {
		t.Errorf("the split is not stated: %q", split)
	}
	heldOut := eval(`document.querySelector('.held-out-id').textContent`)
	first := eval(`document.querySelector('input[name="example_id"]').value`)
	if heldOut == "" || first == "" {
		t.Fatalf("no held-out id (%q) or no drafted example (%q)", heldOut, first)
	}
	step("use a held-out example", chromedp.SetValue(chromedp.CSS(`input[name="example_id"]`), heldOut),
		chromedp.Click(chromedp.CSS(`[data-testid="draft-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="draft-errors"]`)),
	)
	if msg := eval(`document.querySelector('[data-testid="draft-errors"]').textContent`); !strings.Contains(msg, "in the held-out part") {
		t.Errorf("refusal says %q", msg)
	}
	step("accept", chromedp.SetValue(chromedp.CSS(`input[name="example_id"]`), first),
		chromedp.SetValue(chromedp.CSS(`#high`), "Lively, specific, and it moves the talk on."),
		chromedp.Click(chromedp.CSS(`[data-testid="draft-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="before-after"]`)),
	)
	waitFor("held-out runs finish", `[data-testid="comparison"]`)
	if row := eval(`document.querySelector('[data-testid="comparison"] tbody tr').textContent`); !strings.Contains(row, "Pearson") {
		t.Errorf("first comparison row: %q", row)
	}
	if iv := eval(`document.querySelector('[data-testid="interval"]').textContent`); !strings.Contains(iv, " to ") {
		t.Errorf("no interval: %q", iv)
	}
	// On a 390 px phone the held-out comparison's paired tests do not
	// wrap into rows many lines tall, nor split words, nor widen the page
	// (as the compare page: TestBrowserPreviewKeepsWordsWholeOnPhone).
	align := b.location()
	setWidth(t, ctx, 390)
	step("alignment at 390 px", chromedp.Navigate(align), chromedp.WaitVisible(chromedp.CSS(`[data-testid="comparison"]`)))
	pageCheck(t, ctx, "align-phone", true) // axe, a screenshot, no sideways page scroll
	if got := wordsSplit(b, `[data-testid="comparison"] th, [data-testid="comparison"] td, [data-testid="comparison-tests-list"] li`, wordToken); got != "" {
		t.Errorf("the held-out comparison at 390 px splits these words across lines: %s", got)
	}
	if tall := tallRows(b, `[data-testid="comparison"]`); tall != "" {
		t.Errorf("at 390 px rows of the held-out comparison are more than three lines tall: %s", tall)
	}
	setWidth(t, ctx, tabWidth)
	step("versions", chromedp.Click(chromedp.CSS(`nav.crumbs a[href$="/versions"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="rubric-runs"]`)))
	versions := eval(`[...document.querySelectorAll('[data-testid="run-version"]')].map(e => e.textContent).join("|")`)
	if !strings.Contains(versions, "version 2") || !strings.Contains(versions, "version 1") {
		t.Errorf("runs' versions: %q", versions)
	}
}
