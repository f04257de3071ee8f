package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/web/webtest"
)

// reviewBrowser is this test's browser setup, kept in one small function
// so it can move onto a shared harness.
func reviewBrowser(t *testing.T) (string, context.Context, func()) {
	base := startServer(t)
	return base, newTab(t), func() {}
}

// TestBrowserReviewQueue: a reviewer opens the queue of a judged dataset,
// which hides the judge (blind mode); types their name once; shows the keys
// with "?"; rates samples with number keys (each key saves, the judge then
// shows) and moves on with "j"; records a disagreement with a reason and a
// comment. The run's report ignores those ratings until "Recompute with
// browser ratings"; then its correlation changes, a human ceiling appears
// (imported column and the reviewer: two annotators) and each reviewed
// sample's human rating is the mean of the two.
func TestBrowserReviewQueue(t *testing.T) {
	base, ctx, closeBrowser := reviewBrowser(t)
	defer closeBrowser()

	b := browserSteps{t, ctx}
	step := b.do
	eval := b.eval
	// newPage runs an action that loads another page (a form post and its
	// redirect, a link) and waits until that page has loaded.
	newPage := func(name string, action chromedp.Action[chromedp.Void]) {
		t.Helper()
		eval(`(window.__stale = true, "")`)
		step(name, action)
		for i := 0; ; i++ {
			fresh, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__stale !== true && document.readyState === "complete"`))
			if err == nil && fresh {
				return
			}
			if i > 200 || ctx.Err() != nil {
				t.Fatalf("%s: no new page (%v)", name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A one-round run on the demo data and the simulated judge.
	step("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "run to review"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	runPage, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; ; i++ {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('[data-testid="run-status"]') || {}).textContent || ""`))
		if err == nil && strings.Contains(status, "succeeded") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("run did not succeed (status %q, %v)", status, err)
		}
		time.Sleep(300 * time.Millisecond)
		if i%15 == 0 {
			_ = chromedp.Do(ctx, chromedp.Navigate(runPage))
		}
	}
	firstCard := `document.querySelectorAll('[data-testid="criterion-card"]')[0]`
	step("run page", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.CSS(`[data-testid="human-source"]`)))
	pearsonBefore := eval(firstCard + `.querySelector('[data-testid="coef"]').textContent`)
	if got := eval(`document.querySelector('[data-testid="provenance-human-source"]').textContent`); got != "imported column" {
		t.Errorf("human ratings used before any review: %q", got)
	}
	if got := eval(`String(` + firstCard + `.querySelector('[data-testid="ceiling"]') !== null)`); got != "false" {
		t.Fatalf("the demo data has one rating per sample: no ceiling expected before the review (got %s)", got)
	}

	// The queue, from the dataset page: blind.
	step("dataset page", chromedp.Navigate(base+"/datasets/1"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="dataset-review-link"]`)))
	newPage("open queue", chromedp.Click(chromedp.CSS(`[data-testid="dataset-review-link"]`)))
	step("blind", chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-blind"]`)))
	if n := eval(`String(document.querySelectorAll('[data-testid="review-judge"], [data-testid="review-analysis"], [data-testid="review-agree"]').length)`); n != "0" {
		t.Fatalf("blind mode shows %s judge elements before rating", n)
	}
	step("name", chromedp.SendKeys(chromedp.CSS(`[data-testid="reviewer-name"]`), "Ann"))
	eval(`(document.activeElement.blur(), "")`)
	step("keys help", chromedp.KeyEvent("?"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-keys"]`)))

	type rated struct {
		ext            string
		mine, imported float64
	}
	var done []rated
	keys := []string{"1", "3", "1", "3", "2", "1"}
	for k, key := range keys {
		ext := strings.TrimSpace(strings.TrimSuffix(eval(`document.querySelector('[data-testid="review-sample"] h2').firstChild.textContent`), " "))
		ext = strings.TrimPrefix(ext, "Sample ")
		rate := chromedp.Action[chromedp.Void](chromedp.KeyEvent(key))
		if k == 2 {
			// A second key pressed before the saved page came back
			// sent the form again: its rating replaced the first
			// unseen, or, once the first had been saved, the page
			// came back refusing it as a stale tab's. It is ignored:
			// the first key's rating is saved, as the form shows.
			rate = chromedp.Steps(chromedp.KeyEvent(key), chromedp.KeyEvent("2"))
		}
		newPage("rate "+ext, rate)
		step("judge shown "+ext, chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-judge"]`)))
		if k == 2 {
			time.Sleep(300 * time.Millisecond) // a second page, if one was asked for, would be here
			if got := eval(`document.body.textContent`); strings.Contains(got, "Save again to replace") {
				t.Fatalf("%s: two keys pressed at once came back as a stale page: %.300q", ext, got)
			}
		}
		imp, err := webtest.ParseNumber(eval(`document.querySelector('[data-testid="review-human"]').textContent`))
		if err != nil {
			t.Fatalf("imported human rating of %s: %v", ext, err)
		}
		mine, _ := strconv.ParseFloat(key, 64)
		done = append(done, rated{ext, mine, imp})
		if got := eval(`document.querySelector('[data-testid="review-rated"]').textContent`); got != strconv.Itoa(k+1) {
			t.Errorf("progress after %d ratings: %s rated", k+1, got)
		}
		if checked := eval(`(document.querySelector('[data-testid="review-form"] input[name="score"]:checked') || {}).value || ""`); checked != key {
			t.Errorf("%s: the form shows rating %q, want %q", ext, checked, key)
		}
		if k == 0 {
			// A disagreement with the judge's analysis, with a reason and a comment.
			step("disagree", chromedp.Click(chromedp.CSS(`[data-testid="review-disagree"]`)),
				chromedp.SendKeys(chromedp.CSS(`[data-testid="review-reason"]`), "misses the question"),
				chromedp.SendKeys(chromedp.CSS(`[data-testid="review-comment"]`), "the reply ignores what was asked"))
			newPage("save disagreement", chromedp.Click(chromedp.CSS(`[data-testid="review-save"]`)))
			if got := eval(`document.querySelector('[data-testid="review-reason"]').value + "|" + document.querySelector('[data-testid="review-comment"]').value + "|" + document.querySelector('[data-testid="review-disagree"]').checked`); got != "misses the question|the reply ignores what was asked|true" {
				t.Errorf("saved disagreement reads %q", got)
			}
			// The sample page lists it.
			sampleURL := eval(`document.querySelector('[data-testid="review-sample"] h2 a').href`)
			queueURL := eval(`location.href`)
			step("sample page", chromedp.Navigate(sampleURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="sample-review"]`)))
			if got := eval(`document.querySelector('[data-testid="sample-review"]').textContent`); !strings.Contains(got, "Ann") ||
				!strings.Contains(got, "disagrees with the judge") || !strings.Contains(got, "misses the question") {
				t.Errorf("sample page review panel: %.400q", got)
			}
			step("back to the queue", chromedp.Navigate(queueURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-judge"]`)))
		}
		if k+1 < len(keys) {
			newPage("next", chromedp.KeyEvent("j"))
			step("next is blind", chromedp.WaitVisible(chromedp.CSS(`[data-testid="review-blind"]`)))
		}
	}

	// The report has not changed by itself.
	step("run page again", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.CSS(`[data-testid="human-source-pending"]`)))
	if got := eval(firstCard + `.querySelector('[data-testid="coef"]').textContent`); got != pearsonBefore {
		t.Errorf("Pearson changed before recompute: %s -> %s", pearsonBefore, got)
	}
	newPage("recompute", chromedp.Click(chromedp.CSS(`[data-testid="recompute-humans"]`)))
	step("recomputed", chromedp.WaitVisible(chromedp.CSS(`[data-testid="ceiling"]`)))
	if got := eval(`document.querySelector('[data-testid="provenance-human-source"]').textContent`); !strings.HasPrefix(got, fmt.Sprintf("imported column and browser ratings (%d browser ratings", len(keys))) {
		t.Errorf("human ratings used after recompute: %q", got)
	}
	pearsonAfter := eval(firstCard + `.querySelector('[data-testid="coef"]').textContent`)
	if pearsonAfter == pearsonBefore {
		t.Errorf("Pearson unchanged by the browser ratings: %s", pearsonAfter)
	}
	ceiling := eval(firstCard + `.querySelector('[data-testid="ceiling"]').textContent`)
	items := eval(firstCard + `.querySelector('[data-testid="ceiling-items"]').textContent`)
	if !strings.Contains(ceiling, "Annotators2") || items != strconv.Itoa(len(keys)) {
		t.Errorf("ceiling after recompute: %q (over %q samples); want 2 annotators over %d samples", ceiling, items, len(keys))
	}
	// Each reviewed sample's human rating is now the mean of the imported
	// rating and the reviewer's.
	for _, r := range done {
		js := fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-testid="sample-row"]')).find(tr => tr.cells[0].textContent.trim() === %q) || {cells: [0,0,{textContent: "missing"}]}).cells[2].textContent`, r.ext)
		if got, want := eval(js), strconv.FormatFloat((r.mine+r.imported)/2, 'f', 2, 64); got != want {
			t.Errorf("sample %s: human %s after recompute, want %s (imported %g, reviewer %g)", r.ext, got, want, r.imported, r.mine)
		}
	}
}
