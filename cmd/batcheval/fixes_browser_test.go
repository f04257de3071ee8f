package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
)

// Browser tests for the fixes of issue 9 that the launch-form, dead-judge
// and journey tests do not cover: one test per fix.

// demoRunPath is the path of the seeded demo's finished run, read from
// the runs list.
func demoRunPath(t *testing.T, b browserSteps, base string) string {
	t.Helper()
	b.do("runs list", chromedp.Navigate(base+"/runs"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	href := b.eval(fmt.Sprintf(`Array.from(document.querySelectorAll('a[href^="/runs/"]')).filter(a => a.textContent.includes(%q)).map(a => a.getAttribute("href"))[0] || ""`, demo.FirstRunName))
	if href == "" {
		t.Fatalf("the runs list does not link the demo run %q", demo.FirstRunName)
	}
	return href
}

// TestBrowserCompareMismatch: comparing two runs that judged different
// criteria on different scales warns that they are not comparable and
// gives no agreement verdict, while each run's agreement with the humans
// is still shown.
func TestBrowserCompareMismatch(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "b.db")
	base := startServerAt(t, dbPath)
	ctx := newTab(t)
	b := browserSteps{t, ctx}

	demoRun := demoRunPath(t, b, base)
	demoID := strings.TrimPrefix(demoRun, "/runs/")

	// A second run on the demo data; its criteria are then renamed and
	// rescaled in the database, as if it had judged Fluency (1-3).
	b.do("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "fluency run"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	db, err := models.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var other models.Run
	for {
		if err := db.Gorm.Where("name = ?", "fluency run").First(&other).Error; err == nil && other.Finished() {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the second run did not finish")
		}
		time.Sleep(200 * time.Millisecond)
	}
	snap := other.RubricSnapshot
	for i := range snap.Criteria {
		snap.Criteria[i].Name = fmt.Sprintf("Fluency %d", i+1)
		snap.Criteria[i].Lo, snap.Criteria[i].Hi = 1, 3
	}
	if err := db.Gorm.Model(&models.Run{}).Where("id = ?", other.ID).Select("RubricSnapshot").Updates(&models.Run{RubricSnapshot: snap}).Error; err != nil {
		t.Fatal(err)
	}

	// The demo run's page does not offer the other run for comparison.
	b.do("demo run page", chromedp.Navigate(base+demoRun), chromedp.WaitVisible(chromedp.CSS(`main`)))
	offered := b.eval(`Array.from(document.querySelectorAll('#compare-b option')).map(o => o.value).join(",")`)
	for _, v := range strings.Split(offered, ",") {
		if v == fmt.Sprint(other.ID) {
			t.Errorf("the demo run's compare choice offers run %d, which judged other criteria (offered: %s)", other.ID, offered)
		}
	}

	b.do("compare", chromedp.Navigate(fmt.Sprintf("%s/compare?a=%s&b=%d", base, demoID, other.ID)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="compare-mismatch"]`)))
	if got := b.text(`[data-testid="compare-mismatch"]`); !strings.Contains(got, "not comparable") || !strings.Contains(got, "different") {
		t.Errorf("mismatch warning %q does not say why the runs differ", got)
	}
	verdict := `(strong|moderate|weak|negligible) (dis)?agreement`
	if got := b.eval(`(document.querySelector('[data-testid="runs-reading"]') || {textContent: ""}).textContent`); strings.TrimSpace(got) == "" {
		t.Errorf("no reading of how the two runs relate")
	} else if matched(verdict, got) {
		t.Errorf("runs reading %q gives an agreement verdict for runs that are not comparable", got)
	}
	if got := b.eval(`(document.querySelector('[data-testid="agreement-reading"]') || {textContent: ""}).textContent`); got != "" && !strings.HasPrefix(strings.TrimSpace(got), "No verdict") {
		t.Errorf("agreement reading %q gives a verdict for runs that are not comparable", got)
	}
	for _, side := range []string{"a", "b"} {
		if got := b.eval(`(document.querySelector('[data-testid="human-agreement-` + side + `"]') || {textContent: ""}).textContent`); !strings.Contains(got, "Pearson") {
			t.Errorf("run %s's card does not show its agreement with the humans: %q", side, got)
		}
	}
	pageCheck(t, ctx, "fix-compare-mismatch", false)

	// The sample table is paged at 50; the demo's 30 samples fit one page.
	rows := b.eval(`String(document.querySelectorAll('[data-testid="compare-row"]').length)`)
	pager := b.eval(`String(!!document.querySelector('[data-testid="compare-pager"]'))`)
	if n := atoi(rows); n == 0 || n > 50 {
		t.Errorf("compare page lists %d samples on a page, want 1 to 50", n)
	} else if n < 50 && pager == "true" {
		t.Errorf("a pager is shown for %d samples", n)
	}
}

func matched(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(strings.ToLower(s))
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// TestBrowserUploadChecks: repeated ids are explained with the
// "one row per annotator" offer, and a CSV whose first row is data warns
// before import and offers to read that row as data.
func TestBrowserUploadChecks(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}
	dir := t.TempDir()

	upload := func(name, content string) {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		b.do("upload "+name, chromedp.Navigate(base+"/projects/1/datasets/new"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)),
			chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{file}),
			chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	}

	upload("per-annotator.csv", "id,text,rater,quality\n"+
		"s1,first answer here,ann1,1\n"+
		"s1,first answer here,ann2,3\n"+
		"s2,second answer here,ann1,2\n"+
		"s2,second answer here,ann2,4\n"+
		"s3,third answer here,ann1,5\n")
	note := b.text(`[data-testid="id-note"]`)
	for _, want := range []string{"was not taken as the id", "s1", "s2", "one row per annotator"} {
		if !strings.Contains(note, want) {
			t.Errorf("repeated-id note lacks %q: %q", want, note)
		}
	}
	pageCheck(t, ctx, "fix-upload-repeated-ids", false)
	// Following the offer selects rater as the annotator column.
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="use-annotator"]`))); err != nil {
		t.Fatalf("follow the one-row-per-annotator link: %v", err)
	}
	b.do("mapping again", chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	if got := b.eval(`document.querySelector('#annotator-column').value`); got != "rater" {
		t.Errorf("after the offer the annotator column is %q, want rater", got)
	}
	if got := b.eval(`String(!!document.querySelector('[data-testid="id-note"]'))`); got != "false" {
		t.Errorf("the repeated-id note stays once the per-annotator layout is chosen")
	}

	upload("no-header.csv", "1,the cat sat on the mat,4\n2,a dog ran in the park,5\n3,birds sing at dawn,2\n")
	warning := b.text(`[data-testid="header-warning"]`)
	if !strings.Contains(warning, "numbers") || !strings.Contains(warning, "not imported") {
		t.Errorf("first-row warning %q does not say the first row looks like data and would be lost", warning)
	}
	pageCheck(t, ctx, "fix-upload-first-row-data", false)
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="first-row-is-data"]`))); err != nil {
		t.Fatalf("choose to read the first row as data: %v", err)
	}
	b.do("mapping without header", chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-header-note"]`)))
	if got := b.text(`[data-testid="preview"]`); !strings.Contains(got, "the cat sat on the mat") {
		t.Errorf("read as data, the preview lacks the first row: %q", got)
	}
}

// TestBrowserFinishedRunPage: the demo's finished run reads as finished
// (badge, cost and duration, no time left), its scatter is one tab stop,
// its histogram labels the y axis, and a sample page links its neighbours
// and keeps the batch's whole answer in an expandable block.
func TestBrowserFinishedRunPage(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}

	run := demoRunPath(t, b, base)
	b.do("run page", chromedp.Navigate(base+run), chromedp.WaitVisible(chromedp.CSS(`main`)))
	// The demo run is judged when the server starts (simulated judge, a
	// few seconds); the page reloads itself when it ends.
	b.waitFor("the demo run to finish", `((document.querySelector('[data-testid="run-status"]') || {}).textContent || "").includes("succeeded") && !!document.querySelector('[data-testid="scatter"]')`)
	b.do("run page again", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="scatter"]`)))
	if got := strings.ToLower(b.text(`[data-testid="run-status"]`)); strings.Contains(got, "queued") || strings.Contains(got, "running") || strings.TrimSpace(got) == "" {
		t.Errorf("finished run's badge reads %q", got)
	}
	figures := b.text(`dl.progress-figures`)
	for _, want := range []string{"Cost", "Took"} {
		if !strings.Contains(figures, want) {
			t.Errorf("finished run's figures lack %q: %q", want, figures)
		}
	}
	for _, gone := range []string{"Time left", "Cost so far"} {
		if strings.Contains(figures, gone) {
			t.Errorf("finished run's figures still show %q: %q", gone, figures)
		}
	}
	if got := b.eval(`(() => { const s = document.querySelector('[data-testid="scatter"]'); return s.getAttribute("tabindex") + "/" + s.querySelectorAll('a, [tabindex], button, input').length })()`); got != "0/0" {
		t.Errorf("scatter tabindex/focusable points inside = %s, want 0/0 (one tab stop)", got)
	}
	if got := b.eval(`(document.querySelector('[data-testid="histogram-ylabel"]') || {textContent: ""}).textContent`); strings.TrimSpace(got) == "" {
		t.Errorf("histogram has no y-axis label")
	}
	pageCheck(t, ctx, "fix-finished-run", false)

	// The second sample of the run has both neighbours.
	first := b.eval(`document.querySelector('[data-testid="scatter-point"]').getAttribute('href')`)
	b.do("first sample", chromedp.Navigate(base+first), chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	next := b.eval(`(() => { const a = document.querySelector('[data-testid="next-sample"]') || document.querySelector('[data-testid="prev-sample"]'); return a ? a.getAttribute('href') : "" })()`)
	if next == "" {
		t.Fatal("sample page links neither a previous nor a next sample")
	}
	b.do("neighbour sample", chromedp.Navigate(base+next), chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	hasPrev := b.eval(`String(!!document.querySelector('[data-testid="prev-sample"]'))`)
	hasNext := b.eval(`String(!!document.querySelector('[data-testid="next-sample"]'))`)
	if hasPrev != "true" && hasNext != "true" {
		t.Errorf("sample page has no previous/next links")
	}
	if got := b.eval(`(() => { const d = document.querySelector('details[data-testid="batch-answer"]'); return d ? String(d.open) + ":" + d.querySelector('summary').textContent : "" })()`); got == "" {
		t.Errorf("sample page has no expandable batch answer")
	} else if !strings.HasPrefix(got, "false:") {
		t.Errorf("batch answer block is open by default: %q", got)
	}
	if got := b.eval(`String(document.querySelectorAll('[data-testid="mate-human"]').length)`); got == "0" {
		t.Errorf("sample page does not show the batch-mates' human ratings")
	}
	pageCheck(t, ctx, "fix-sample-nav", false)
}

// TestBrowserFavicon: /favicon.ico answers with an icon.
func TestBrowserFavicon(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}
	b.do("home", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/favicon.ico").then(r => r.blob().then(b => r.status + " " + (r.headers.get("content-type") || "") + " " + b.size))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var status, size int
	var ctype string
	if _, err := fmt.Sscan(got, &status, &ctype, &size); err != nil {
		t.Fatalf("favicon answer %q: %v", got, err)
	}
	if status != 200 || !strings.HasPrefix(ctype, "image/") || size == 0 {
		t.Errorf("GET /favicon.ico = %q, want 200, an image type and some bytes", got)
	}
}

// TestBrowserFormsLandWhereTheChangeIs: a launch form with several
// mistakes comes back with every error next to its field and listed at the
// top with links to them; "Add a criterion" on the rubric editor lands on
// the new criterion, not at the top of the page; the runs list reads
// method names, agreement and cost under one breadcrumb trail.
func TestBrowserFormsLandWhereTheChangeIs(t *testing.T) {
	base := startServer(t)
	ctx := newTab(t)
	b := browserSteps{t, ctx}

	b.do("launch form", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		// The browser's own checks would stop "x" in a number box; the
		// server's are what this test is about, so they are switched off
		// (as an older browser or a script would send the form).
		chromedp.Evaluate[chromedp.Void](`(() => {
			document.querySelector('form.launch-form').noValidate = true;
			for (const [name, v] of [["rounds", "x"], ["seed", "1.5"]]) {
				const el = document.querySelector('input[name="' + name + '"]'); el.type = "text"; el.value = v;
			}
			document.querySelectorAll('input[name="criteria"]').forEach(el => el.checked = false);
		})()`),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)))
	for _, field := range []string{"rounds", "seed", "criteria"} {
		msg := b.eval(`(document.querySelector('[data-testid="field-error-` + field + `"]') || {}).textContent || ""`)
		if strings.TrimSpace(msg) == "" {
			t.Errorf("no error shown next to %s", field)
		}
		if b.eval(`document.querySelector('[data-testid="form-errors"] a[href="#`+field+`"]') ? "yes" : ""`) != "yes" {
			t.Errorf("the error list at the top does not link to %s", field)
		}
	}
	checkAxe(t, ctx, "fix-launch-errors")

	b.do("rubric editor", chromedp.Navigate(base+"/projects/1/rubrics/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rubric-form"]`)))
	before := b.eval(`String(document.querySelectorAll('[id^="criteria["][id$="].name"]').length)`)
	b.do("add a criterion", chromedp.Click(chromedp.CSS(`[data-testid="add-criterion"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rubric-form"]`)))
	b.waitFor("the new criterion", `document.querySelectorAll('[id^="criteria["][id$="].name"]').length > `+before)
	if loc := b.location(); !strings.Contains(loc, "#criterion-"+before) {
		t.Errorf("after Add a criterion the page is at %s, want the anchor #criterion-%s", loc, before)
	}
	if b.eval(`document.getElementById("criterion-`+before+`") ? "yes" : ""`) != "yes" {
		t.Errorf("the page has no element #criterion-%s to land on", before)
	}

	b.do("runs list", chromedp.Navigate(base+"/runs"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	head := b.text(`main table thead`)
	for _, want := range []string{"Method", "Agreement", "Cost"} {
		if !strings.Contains(head, want) {
			t.Errorf("runs list header %q lacks %s", head, want)
		}
	}
	if got := b.eval(`String(document.querySelectorAll('nav[aria-label="Breadcrumb"]').length) + " " + ((document.querySelector('nav[aria-label="Breadcrumb"] a') || {}).getAttribute ? document.querySelector('nav[aria-label="Breadcrumb"] a').getAttribute("href") : "")`); got != "1 /" {
		t.Errorf("breadcrumb trails and first link: %q, want one trail starting at /", got)
	}
	if body := b.text(`main table tbody`); strings.Contains(body, "batcheval") && !strings.Contains(body, "BatchEval") {
		t.Errorf("runs list shows the method's key, not its name: %q", body)
	}
	checkAxe(t, ctx, "fix-runs-list")
}
