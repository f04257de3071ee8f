package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSampleKeysRateTheFocusedForm: a sample page has one review
// form per criterion. A number key rated the first criterion's form
// whatever form the reviewer was in (in the second criterion's, "3" set
// the first one's rating and left the second's empty, and saving the
// second then kept no rating). It now rates the form holding the focus;
// with the focus in no form, on a page of several forms, it rates none.
func TestBrowserSampleKeysRateTheFocusedForm(t *testing.T) {
	base, ctx := startServer(t), newTab(t)
	b := browserSteps{t, ctx}
	// The demo's run judges while the server starts: wait for its sample
	// page's review forms.
	for i := 0; ; i++ {
		b.do("sample page", chromedp.Navigate(base+"/runs/1/samples/1"))
		if b.eval(`String(document.querySelectorAll("form[data-review-form]").length)`) == "2" {
			break
		}
		if i > 100 {
			t.Fatal("the demo run's sample page has no two review forms")
		}
		time.Sleep(300 * time.Millisecond)
	}
	ratings := func() string {
		return b.eval(`[...document.querySelectorAll("form[data-review-form]")].map(f => f.querySelector("input[name=criterion]").value + ":" + ((f.querySelector("input[name=score]:checked") || {}).value || "-")).join(" ")`)
	}
	if got := ratings(); strings.Count(got, ":-") != 2 {
		t.Fatalf("ratings before any key: %s, want none", got)
	}
	// Focus on the second form's first rating, as Tab would put it.
	b.eval(`(document.querySelectorAll("form[data-review-form]")[1].querySelector("input[name=score]").focus(), "")`)
	b.do("key 3", chromedp.KeyEvent("3"))
	first := b.eval(`document.querySelectorAll("form[data-review-form]")[0].querySelector("input[name=criterion]").value`)
	second := b.eval(`document.querySelectorAll("form[data-review-form]")[1].querySelector("input[name=criterion]").value`)
	if got, want := ratings(), first+":- "+second+":3"; got != want {
		t.Errorf("key 3 in the second form: ratings %s, want %s", got, want)
	}
	// No form focused: the key rates none of the two.
	b.eval(`(document.activeElement.blur(), "")`)
	b.do("key 2", chromedp.KeyEvent("2"))
	if got, want := ratings(), first+":- "+second+":3"; got != want {
		t.Errorf("key 2 with no form focused: ratings %s, want %s", got, want)
	}
}
