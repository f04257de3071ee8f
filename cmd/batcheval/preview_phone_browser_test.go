package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserPreviewKeepsWordsWholeOnPhone: on a 390 px phone the upload's
// preview and the dataset's rows scroll sideways inside their box rather
// than squeeze every column to a letter or two (QA: "Hello, how" read
// "Hello / , how", the id "r1" read "r / 1"): no word of a cell is split
// across lines. Cells still wrap between words, and a word wider than
// a cell may still break. The compare page too: no sideways page scroll,
// no word split in its tables, and rows of coefficients at most three
// lines tall (QA: the paired tests wrapped into very tall rows).
func TestBrowserPreviewKeepsWordsWholeOnPhone(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}
	setWidth(t, ctx, 390)
	file := filepath.Join(t.TempDir(), "replies.csv")
	csv := "id,reply,context,human_quality,notes\n" +
		"r1,\"Hello, how can I help you today?\",Hi there,4,fine\n" +
		"r2,Go away.,Can you help me?,1,rude\n" +
		"r3,\"I think the answer is 42, but I'm not sure.\",What is the meaning of life?,3,unsure\n" +
		"r4,Of course! Here is a long and thoughtful answer covering every detail.,Explain,5,thorough\n"
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("upload", chromedp.Navigate(base+"/projects/1/datasets/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{file}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	checkWords := func(where, sel, word string) {
		t.Helper()
		if got := wordsSplit(b, sel, word); got != "" {
			t.Errorf("%s at 390 px splits these words across lines: %s", where, got)
		}
	}
	check := func(where, sel string) { t.Helper(); checkWords(where, sel, wordToken) }
	check("upload preview", `[data-testid="preview"] td`)
	b.do("import", chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rows"]`)))
	check("dataset rows", `[data-testid="rows"] td`)
	noPageScroll(t, ctx, "dataset page")

	// The compare page of the demo run and a second run on the same data:
	// its table of coefficients had a paired-tests column that wrapped
	// into rows many lines tall at 390 px.
	demoRun := demoRunPath(t, b, base)
	b.do("launch a second run", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "second run"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)))
	second := expURLPath(b.location())
	b.waitFor("the second run to finish", `!!document.querySelector('[data-testid="results"] [data-testid="scatter"]')`)
	b.do("compare", chromedp.Navigate(fmt.Sprintf("%s/compare?a=%s&b=%s", base, strings.TrimPrefix(demoRun, "/runs/"), strings.TrimPrefix(second, "/runs/"))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="agreement-table"]`)))
	pageCheck(t, ctx, "compare-phone", true) // axe, a screenshot, no sideways page scroll
	check("compare coefficients", `[data-testid="agreement-table"] th, [data-testid="agreement-table"] td, [data-testid="agreement-tests-list"] li`)
	check("compare sample ids", `[data-testid="compare-row"] td:not(.small)`)
	checkWords("compare excerpts", `[data-testid="compare-row"] td.small`, wordProse)
	// No row of coefficients is taller than three lines of text.
	if tall := tallRows(b, `[data-testid="agreement-table"]`); tall != "" {
		t.Errorf("at 390 px rows of the coefficients table are more than three lines tall: %s", tall)
	}
}

// wordsSplit lists the words of the text in the elements sel selects that
// lie on more than one line (a Range over a word has one box per line it
// spans; every text counts, a link's or a strong's included), joined by
// " | "; "" when none. word is the pattern of a word (wordToken,
// wordProse).
func wordsSplit(b browserSteps, sel, word string) string {
	b.t.Helper()
	const split = `(() => {
		const out = [];
		for (const td of document.querySelectorAll(SEL)) {
			const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
			for (let node = walk.nextNode(); node; node = walk.nextNode()) {
				const re = new RegExp(WORD, "g");
				let m;
				while ((m = re.exec(node.data)) !== null) {
					const r = document.createRange();
					r.setStart(node, m.index);
					r.setEnd(node, m.index + m[0].length);
					const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
					if (lines.size > 1) out.push(m[0]);
				}
			}
		}
		return out.join(" | ");
	})()`
	return b.eval(strings.NewReplacer("SEL", "'"+sel+"'", "WORD", "'"+word+"'").Replace(split))
}

// A word is what lies between spaces (wordToken): an id such as "demo-24"
// or "r1" is one. In prose a line may end after a hyphen, as print does
// ("heart-" / "shaped"), so there each part up to a hyphen is a word
// (wordProse).
const (
	wordToken = `\\S+`
	wordProse = `[^\\s-]+-?`
)

// tallRows names the body rows of the table sel selects that are more
// than three lines of text tall (by their data-testid, else their first
// cell's text), with their height; "" when none.
func tallRows(b browserSteps, sel string) string {
	b.t.Helper()
	return b.eval(strings.ReplaceAll(`(() => {
		const td = document.querySelector(SEL + ' td');
		const line = (td && parseFloat(getComputedStyle(td).lineHeight)) || 20;
		return Array.from(document.querySelectorAll(SEL + ' tbody tr'))
			.filter(tr => tr.getBoundingClientRect().height > 3 * line + 16)
			.map(tr => (tr.dataset.testid || tr.cells[0].textContent.trim()) + " " + Math.round(tr.getBoundingClientRect().height) + " px").join(", ");
	})()`, "SEL", "'"+sel+"'"))
}
