package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRefusedFormsTieEachMessage: in a real browser, a New project
// form sent with no name and a mapping step sent with a column both shown
// to the judge and ticked as a rating each show the message beside the
// input, name it in the input's aria-describedby, link it from the summary
// at the top, and pass axe-core (valid ARIA references, unique ids).
func TestBrowserRefusedFormsTieEachMessage(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}

	// tied checks the input's aria-describedby names an element that says
	// something, and the summary links to the input.
	tied := func(id string) {
		t.Helper()
		js := `(() => {
			const el = document.getElementById("` + id + `");
			if (!el || el.getAttribute("aria-invalid") !== "true") return "";
			const ids = (el.getAttribute("aria-describedby") || "").split(/\s+/);
			return ids.map(i => (document.getElementById(i) || {}).textContent || "").join(" ").trim();
		})()`
		if msg := b.eval(js); msg == "" {
			t.Errorf("%s is not invalid with a message its aria-describedby names", id)
		}
		if b.eval(`document.querySelector('[data-testid="form-errors"] a[href="#`+id+`"]') ? "yes" : ""`) != "yes" {
			t.Errorf("the summary does not link to %s", id)
		}
	}

	b.do("new project, no name", chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-project"]`)),
		// The browser's own check (required) would stop the form; the
		// server's answer is what this test is about.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="new-project"]').noValidate = true`),
		chromedp.SetValue(chromedp.CSS(`#project-description`), `<b>kept</b>`),
		chromedp.Click(chromedp.CSS(`[data-testid="new-project"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)))
	tied("project-name")
	if got := b.eval(`document.getElementById("project-description").value`); got != "<b>kept</b>" {
		t.Errorf("the typed description is %q, want it kept", got)
	}
	checkAxe(t, ctx, "new-project-refused")

	file := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(file, []byte("id,text,score\na,first text,4\nb,second text,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("upload", chromedp.Navigate(base+"/projects/1/datasets/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{file}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	b.do("map score both ways", chromedp.Evaluate[chromedp.Void](`(() => {
			document.querySelector('input[name="show_2"]').checked = true;
			document.querySelector('input[name="rating_2"]').checked = true;
		})()`),
		chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)))
	tied("map-rating-2")
	if got := b.text(`[data-testid="field-error-map-rating-2"]`); !strings.Contains(got, "both shown to the judge and used as a human rating") {
		t.Errorf("the message beside the rating box says %q", got)
	}
	checkAxe(t, ctx, "mapping-refused")
}
