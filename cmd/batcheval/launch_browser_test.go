package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// launchBrowser starts the program and a browser tab on it. It is kept
// small and local so the shared one-Chromium harness can replace it.
func launchBrowser(t *testing.T) (context.Context, string) {
	t.Helper()
	base := startServer(t)
	return newTab(t), base
}

// pressLaunch presses the launch form's "Launch run" button (the form is
// submitted with it, as by a person's click) without aiming the mouse at
// it. A mouse click (chromedp.Click) scrolls the button into view (it is
// about 3000 px down the form), measures where it is, then presses there;
// anything that moves the button in between (the live estimate right
// above it is swapped in by a fetch after each change, 100 ms debounced
// and much later on a loaded machine) makes the press land on something
// else, no run is launched, and the step waits out its deadline on the
// launch form.
var pressLaunch = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	_, err := chromedp.Evaluate[bool](`(b => { b.click(); return true; })(document.querySelector('form.launch-form button[type="submit"]:not([formaction])'))`)(ctx, tg)
	return err
})

// TestBrowserLaunchFormChoices: after "make a noisy copy" the launch form
// still selects the project's own dataset, and switching the rubric
// switches the criteria on screen (script on), so the run judges what is
// shown.
func TestBrowserLaunchFormChoices(t *testing.T) {
	ctx, base := launchBrowser(t)
	b := browserSteps{t, ctx}
	step := b.do
	eval := b.eval
	selectedText := `(s => s.options[s.selectedIndex].textContent.trim())(document.getElementById("dataset"))`

	// A one-round run, its temperature typed with a decimal comma (a
	// number input sent "" for it; forms46), then a noisy copy of its data.
	step("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`#temperature`), "0,3"),
		pressLaunch,
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	runPage := eval(`location.href`)
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
	if got := eval(`document.querySelector('[data-testid="provenance-settings"]').textContent`); !strings.Contains(got, "temperature=0.3") {
		t.Errorf("the run launched with temperature 0,3 has settings %q, want temperature=0.3", got)
	}
	// Its rates typed with a decimal comma too (number inputs sent "" for
	// them; forms47).
	step("noisy copy", chromedp.Navigate(runPage+"/variants"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="noise"] button[type="submit"]`)),
		chromedp.SetValue(chromedp.CSS(`#delete_percent`), "7,8"),
		chromedp.SetValue(chromedp.CSS(`#replace_percent`), "12,7"),
		chromedp.Click(chromedp.CSS(`[data-testid="noise"] button[type="submit"]`)),
	)
	// The launch lands on the new run's page (running or already done).
	for deadline := time.Now().Add(30 * time.Second); ; {
		if at, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err == nil && at != runPage && !strings.HasSuffix(at, "/variants") && strings.Contains(at, "/runs/") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the noisy copy was not launched: %.400q", eval(`document.querySelector("main").textContent`))
		}
		time.Sleep(200 * time.Millisecond)
	}

	step("launch form after the copy", chromedp.Navigate(base+"/projects/1/runs/new"), chromedp.WaitVisible(chromedp.CSS(`#dataset`)))
	if got := eval(selectedText); !strings.HasPrefix(got, "Demo dialogues (") || strings.Contains(got, "noisy") {
		t.Errorf("the launch form selects %q, want the demo's own dataset", got)
	}
	if got := eval(`Array.from(document.querySelectorAll("#dataset option")).map(o => o.textContent.trim()).join(" | ")`); !strings.Contains(got, "(noisy copy of Demo dialogues)") || !strings.Contains(got, "8% deleted, 13% replaced") {
		t.Errorf("the noisy copy, made at 7,8%% deleted and 12,7%% replaced, is not shown as one: %q", got)
	}

	// A second rubric, written in the editor.
	step("new rubric", chromedp.Navigate(base+"/projects/1/rubrics/new"),
		chromedp.WaitVisible(chromedp.CSS(`#rubric-name`)),
		chromedp.SetValue(chromedp.CSS(`#rubric-name`), "Fluency only"),
		chromedp.SetValue(chromedp.CSS(`#rubric-task`), "A chatbot's reply."),
		chromedp.SetValue(chromedp.CSS(`[id="criteria[0].name"]`), "Fluent"),
	)
	// Its live preview shows the dataset picked, and which samples.
	noisy := eval(`Array.from(document.querySelectorAll("#preview-dataset option")).find(o => o.textContent.includes("noisy")).value`)
	eval(`(s => { s.value = "` + noisy + `"; s.dispatchEvent(new Event("change", {bubbles: true})); return ""; })(document.getElementById("preview-dataset"))`)
	shown := `(e => e ? e.textContent : "")(document.querySelector('#prompt-preview [data-testid="preview-dataset-name"]'))`
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(eval(shown), "noisy"); {
		if time.Now().After(deadline) {
			t.Fatalf("the live preview still shows %q after picking the noisy copy: %.400q", eval(shown), eval(`document.getElementById("prompt-preview").textContent`))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := eval(`document.querySelector('#prompt-preview [data-testid="preview-samples"]').textContent`); !strings.HasPrefix(got, "(rows 1 to ") || !strings.Contains(got, "samples “") {
		t.Errorf("the preview names its samples %q, want (rows 1 to N: samples “...” to “...”)", got)
	}
	step("save the rubric",
		chromedp.Click(chromedp.CSS(`[data-testid="rubric-save"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)),
	)

	criteria := `Array.from(document.querySelectorAll('#criteria label.check')).map(l => l.textContent.trim()).join(" | ")`
	step("launch form", chromedp.Navigate(base+"/projects/1/runs/new"), chromedp.WaitVisible(chromedp.CSS(`#rubric`)))
	before := eval(`document.getElementById("criteria").dataset.rubric`)
	// Switch to the rubric not chosen, whichever the form chose first.
	target := eval(`Array.from(document.querySelectorAll("#rubric option")).find(o => !o.selected).textContent.trim()`)
	fluency := eval(`Array.from(document.querySelectorAll("#rubric option")).find(o => !o.selected).value`)
	crit := map[string]string{"Fluency only": "Fluent", "Engaging and coherent": "Engaging"}
	wantCrit, otherCrit := crit[target], "Fluent"
	if wantCrit == "Fluent" {
		otherCrit = "Engaging"
	}
	eval(`(s => { s.value = "` + fluency + `"; s.dispatchEvent(new Event("change", {bubbles: true})); return ""; })(document.getElementById("rubric"))`)
	deadline := time.Now().Add(10 * time.Second)
	for eval(`document.getElementById("criteria").dataset.rubric`) != fluency {
		if time.Now().After(deadline) {
			t.Fatalf("the criteria still belong to rubric %s after choosing rubric %s: %q", before, fluency, eval(criteria))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if shown := eval(criteria); !strings.Contains(shown, wantCrit) || strings.Contains(shown, otherCrit) {
		t.Errorf("criteria after switching to %q: %q, want %s and not %s", target, shown, wantCrit, otherCrit)
	}
	if got := eval(`document.querySelector('input[name="criteria_of"]').value`); got != fluency {
		t.Errorf("criteria_of = %s, want %s", got, fluency)
	}
	// Launching now judges the shown criteria.
	step("launch on the switched rubric",
		pressLaunch,
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	if _, err := strconv.Atoi(strings.TrimPrefix(eval(`location.pathname`), "/runs/")); err != nil {
		t.Errorf("launch landed on %s, want a run page", eval(`location.pathname`))
	}
}
