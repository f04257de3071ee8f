package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/models/demo"
)

// chromiumPath finds Debian's chromium; CI installs it, so there a missing
// browser fails the test instead of skipping it.
func chromiumPath(t *testing.T) string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: CI must run the browser test (apt-get install chromium)")
	}
	t.Skip("browser test skipped: chromium is not installed (apt-get install chromium)")
	return ""
}

// startServer boots the real program (`batcheval serve`) on a free port
// and returns its URL.
func startServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "b.db"), "--log-level", "warn"},
			func(string) string { return "" }, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server stopped with an error: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop within 30s")
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "running at "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("server exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start within 30s")
	}
	return ""
}

// browserAllocator starts headless Chromium with a fresh profile in dir.
func browserAllocator(chrome, dir string) (context.Context, context.CancelFunc) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(filepath.Join(dir, "chrome")),
	)
	return chromedp.NewExecAllocator(context.Background(), opts...)
}

// TestBrowserEndToEnd is what a newcomer does: upload the demo dataset,
// launch a BatchEval run on the simulated judge, wait for it, and read the
// results: the charts and a sample's analyses.
func TestBrowserEndToEnd(t *testing.T) {
	chrome := chromiumPath(t)
	base := startServer(t)

	dir := t.TempDir()
	dataFile := filepath.Join(dir, "my-dialogues.jsonl")
	if err := os.WriteFile(dataFile, demo.Dataset(), 0o644); err != nil {
		t.Fatal(err)
	}

	actx, cancelAlloc := browserAllocator(chrome, dir)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelT()

	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}

	// The dashboard lists the seeded demo project.
	step("open dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="projects"]`)))
	if got := text(`[data-testid="projects"]`); !strings.Contains(got, demo.ProjectName) {
		t.Fatalf("dashboard lacks the demo project: %q", got)
	}

	// Upload the demo dataset and accept the suggested columns.
	step("upload", chromedp.Navigate(base+"/projects/1/datasets/new"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="upload-form"]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#dataset-file`), []string{dataFile}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mapping-form"]`)),
	)
	if got := text(`[data-testid="preview"]`); !strings.Contains(got, "demo-01") {
		t.Fatalf("preview lacks the first row: %q", got)
	}
	step("import", chromedp.Click(chromedp.CSS(`[data-testid="mapping-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="row-count"]`)))
	if got := text(`[data-testid="row-count"]`); !strings.Contains(got, "30") {
		t.Fatalf("row count = %q, want 30", got)
	}
	dsURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	dsID := dsURL[strings.LastIndex(dsURL, "/")+1:]

	// Launch BatchEval on the uploaded dataset with the simulated judge.
	step("launch form", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`select[name="dataset"]`), dsID),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "3"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "browser test run"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)

	// The page reloads itself when the run finishes (server-sent events).
	step("wait for results", chromedp.WaitVisible(chromedp.CSS(`[data-testid="histogram"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="scatter"]`)))
	for {
		body := text(`main`)
		if strings.Contains(body, "succeeded") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("run did not succeed; page says: %.500s", body)
		}
		time.Sleep(300 * time.Millisecond)
		step("reload", chromedp.Reload())
	}
	if got := text(`main`); !strings.Contains(got, "simulated judge") {
		t.Errorf("results page does not say the scores come from the simulated judge")
	}
	if got := text(`[data-testid="correlations"]`); !strings.Contains(got, "Pearson") {
		t.Errorf("correlation table missing: %q", got)
	}

	// A point of the scatter opens its sample, with one analysis per round.
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="scatter-point"]').getAttribute('href')`))
	if err != nil || href == "" {
		t.Fatalf("no scatter point link: %v", err)
	}
	step("open sample", chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid="analysis"]`)))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="analysis"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	// Two criteria x three rounds.
	if n != 6 {
		t.Errorf("sample page shows %d analyses, want 6", n)
	}
	if got := text(`[data-testid="analysis"]`); strings.TrimSpace(got) == "" {
		t.Errorf("first analysis is empty")
	}
}
