package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// newcomerCSV is what a newcomer brings: a spreadsheet export whose
// dialogue contexts hold line breaks, commas and quotes inside quoted
// cells, with two human rating columns.
func newcomerCSV() string {
	var b strings.Builder
	b.WriteString("id,context,response,engaging,coherent\n")
	responses := []string{
		`Sure, "slow and steady" works: try ten minutes a day.`,
		"Okay.",
		"I would start with the basics, then, add one new thing each week.",
		"Cats are mammals.",
		`Great question! The short answer is "it depends", but here is how to decide.`,
		"No.",
		"Let's plan it together: what time do you usually wake up?",
		"Maybe, maybe not.",
		"Try the recipe with half the sugar, and taste as you go.",
		"Sorry, I did not catch that.",
		"A walk after dinner helps many people sleep; want a few other ideas?",
		"Yes.",
	}
	for i, r := range responses {
		engaging, coherent := 1+(len(r)/25)%3, 1+(len(r)/18)%3
		ctx := fmt.Sprintf("User: question %d, asked on two lines\nAssistant: \"Tell me more\", I said.\nUser: here it is", i+1)
		fmt.Fprintf(&b, "q%02d,%q,%q,%d,%d\n", i+1, ctx, r, engaging, coherent)
	}
	// %q writes Go escapes; CSV doubles quotes and keeps real newlines.
	out := strings.NewReplacer(`\"`, `""`, `\n`, "\n").Replace(b.String())
	return out
}

// TestBrowserNewcomerJourney is the newcomer's first evaluation, in one
// browser, as the issue describes it: home, upload a CSV with quoted
// multi-line text, map its columns, write a rubric, preview the prompt,
// launch, watch progress, read the results and open a sample. Each step
// is screenshotted and checked by axe-core.
func TestBrowserNewcomerJourney(t *testing.T) {
	ctx := newTab(t)
	base := startServer(t)
	b := browserSteps{t, ctx}
	step := 0
	check := func(name string) {
		t.Helper()
		step++
		pageCheck(t, ctx, fmt.Sprintf("journey-%02d-%s", step, name), false)
	}

	file := filepath.Join(t.TempDir(), "my ratings.csv")
	if err := os.WriteFile(file, []byte(newcomerCSV()), 0o644); err != nil {
		t.Fatal(err)
	}

	b.do("home", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="projects"]`)))
	check("home")

	b.do("upload page", chromedp.Navigate(base+"/projects/1/datasets/new"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)))
	check("upload")
	b.do("upload", chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{file}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)))
	check("map")
	// The multi-line cell arrives whole: both of its lines, in one row.
	if got := b.text(`[data-testid="preview"]`); !strings.Contains(got, "asked on two lines") || !strings.Contains(got, "Tell me more") {
		t.Fatalf("preview lacks the multi-line context: %q", got)
	}
	// The judge reads context and response; engaging and coherent are the
	// human ratings (column order: id, context, response, engaging, coherent).
	b.do("map columns",
		chromedp.Evaluate[chromedp.Void](`(() => {
			const set = (name, on) => { const el = document.querySelector('input[name="' + name + '"]'); if (el) el.checked = on; };
			set("show_1", true); set("show_2", true); set("show_3", false); set("show_4", false);
			set("rating_3", true); set("rating_4", true); set("rating_1", false); set("rating_2", false);
		})()`),
		chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="row-count"]`)))
	check("dataset")
	if got := b.text(`[data-testid="row-count"]`); !strings.Contains(got, "12 rows") {
		t.Fatalf("row count %q, want 12 rows (a multi-line cell must not split a row)", got)
	}
	dsURL := b.location()
	dsID := dsURL[strings.LastIndex(dsURL, "/")+1:]

	// The newcomer starts from the "Dialogue response" template, names the
	// rubric and links its criteria to the uploaded human ratings.
	b.do("new rubric", chromedp.Navigate(base+"/projects/1/rubrics/new"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="rubric-form"]`)))
	check("rubric")
	b.do("rubric from template", chromedp.Click(chromedp.CSS(`[data-testid="template-dialogue-response"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[id="criteria[4].name"]`)))
	if got := b.eval(`document.querySelector('[id="criteria[0].name"]').value + "," + document.querySelector('[id="criteria[3].name"]').value`); got != "Engaging,Coherent" {
		t.Fatalf("the template's criteria are %q, want Engaging and Coherent first and fourth", got)
	}
	b.do("name rubric", chromedp.SetValue(chromedp.CSS(`#rubric-name`), "My first rubric"))
	// The human columns are offered from the project's datasets.
	b.do("human columns", chromedp.SetValue(chromedp.CSS(`[id="criteria[0].human"]`), "engaging"),
		chromedp.SetValue(chromedp.CSS(`[id="criteria[3].human"]`), "coherent"))
	// The preview button posts the form and the page comes back with the
	// prompt: wait for that navigation before looking.
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[name="action"][value="preview"]`))); err != nil {
		t.Fatalf("preview prompt: %v", err)
	}
	b.do("prompt shown", chromedp.WaitVisible(chromedp.CSS(`[data-testid="prompt-message"]`)))
	check("preview")
	b.do("save rubric", chromedp.Click(chromedp.CSS(`[data-testid="rubric-save"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	rubricHref := b.eval(`Array.from(document.querySelectorAll('a[href^="/rubrics/"]')).filter(a => a.textContent.includes("My first rubric")).map(a => a.getAttribute("href"))[0] || ""`)
	if rubricHref == "" {
		t.Fatal("the project page does not list the new rubric")
	}
	rubricID := strings.TrimSuffix(strings.TrimPrefix(rubricHref, "/rubrics/"), "/edit")

	// Launch on the uploaded data with the new rubric: choose both and let
	// the form show the rubric's criteria (the no-script way), then launch.
	b.do("launch form", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`select[name="dataset"]`), dsID),
		chromedp.SetValue(chromedp.CSS(`select[name="rubric"]`), rubricID),
	)
	// Setting the selects also fires their change event, and app.js then
	// swaps the criteria part in place; a click can land between finding
	// the button and pressing it as the part is replaced ("Could not find
	// node"): find it again then. A click on the node being replaced can
	// also start no navigation at all, and RunResponse then waits for a
	// response for good (a CI run hung here for ten minutes): each try
	// gets 15 seconds.
	for try := 1; ; try++ {
		tctx, cancelTry := context.WithTimeout(ctx, 15*time.Second)
		_, err := chromedp.RunResponse(tctx, chromedp.Click(chromedp.CSS(`button[formmethod="get"]`)))
		cancelTry()
		if err == nil {
			break
		}
		lost := strings.Contains(err.Error(), "Could not find node") || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded")
		if try == 3 || !lost {
			t.Fatalf("show the rubric's criteria: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	b.do("launch form again", chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)))
	if got := b.eval(`document.querySelector('select[name="rubric"]').value`); got != rubricID {
		t.Fatalf("launch form shows rubric %s, want %s", got, rubricID)
	}
	b.do("launch settings", chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "2"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "my first run"))
	check("launch")
	b.do("launch", chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)))
	check("progress")
	b.waitFor("the run to succeed", `((document.querySelector('[data-testid="run-status"]') || {}).textContent || "").includes("succeeded") && !!document.querySelector('[data-testid="scatter"]')`)
	check("results")
	if got := b.text(`main`); !strings.Contains(got, "my first run") || !strings.Contains(got, "Engaging") || !strings.Contains(got, "Pearson") {
		t.Errorf("results page lacks the run, its criterion or its correlations: %.300q", got)
	}

	href := b.eval(`document.querySelector('[data-testid="scatter-point"]').getAttribute('href')`)
	b.do("sample", chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	check("sample")
	// The sample page shows the multi-line context as the file had it.
	if got := b.text(`main`); !strings.Contains(got, "asked on two lines") || !strings.Contains(got, `"Tell me more"`) {
		t.Errorf("sample page lacks the dialogue context: %.300q", got)
	}
	n := b.eval(`String(document.querySelectorAll('[data-testid="analysis"]').length)`)
	if n != "10" { // the template's five criteria, two rounds each
		t.Errorf("sample page shows %s analyses, want 10 (five criteria x two rounds)", n)
	}
}
