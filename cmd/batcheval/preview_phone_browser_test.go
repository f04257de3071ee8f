package main

import (
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
// a cell may still break.
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
	// Each word of each cell lies on one line: a Range over it has one
	// box per line it spans.
	const split = `(() => {
		const out = [];
		for (const td of document.querySelectorAll(SEL)) {
			const node = td.firstChild;
			if (!node || node.nodeType !== Node.TEXT_NODE) continue;
			const re = /\S+/g;
			let m;
			while ((m = re.exec(node.data)) !== null) {
				const r = document.createRange();
				r.setStart(node, m.index);
				r.setEnd(node, m.index + m[0].length);
				const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
				if (lines.size > 1) out.push(m[0]);
			}
		}
		return out.join(" | ");
	})()`
	check := func(where, sel string) {
		t.Helper()
		if got := b.eval(strings.ReplaceAll(split, "SEL", "'"+sel+"'")); got != "" {
			t.Errorf("%s at 390 px splits these words across lines: %s", where, got)
		}
	}
	check("upload preview", `[data-testid="preview"] td`)
	b.do("import", chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rows"]`)))
	check("dataset rows", `[data-testid="rows"] td`)
	noPageScroll(t, ctx, "dataset page")
}
