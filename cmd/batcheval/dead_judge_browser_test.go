package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batcheval/batcheval/models"
)

// TestBrowserDeadJudgeRunPage: a run whose judge could not be reached
// names the cause on its page, counts its scores as "no answer" (not as
// unreadable answers) and links the list of failed calls.
func TestBrowserDeadJudgeRunPage(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "b.db")
	base := startServerAt(t, dbPath)

	// A tab of the shared Chromium (it started one of its own before).
	ctx, cancelT := context.WithTimeout(newTab(t), 3*time.Minute)
	defer cancelT()
	b := browserSteps{t, ctx}
	step := b.do
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}

	step("launch", chromedp.Navigate(base+"/projects/1/runs/new"),
		chromedp.WaitVisible(chromedp.CSS(`form.launch-form`)),
		chromedp.SetValue(chromedp.CSS(`input[name="rounds"]`), "1"),
		chromedp.SetValue(chromedp.CSS(`input[name="name"]`), "dead judge run"),
		chromedp.Click(chromedp.CSS(`form.launch-form button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="progress"]`)),
	)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}

	// The state a judge that refuses every connection leaves behind.
	db, err := models.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runID int64
	for {
		var r models.Run
		if err := db.Gorm.Order("id DESC").First(&r).Error; err == nil && r.Finished() {
			runID = r.ID
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the run did not finish")
		}
		time.Sleep(200 * time.Millisecond)
	}
	const refused = "judge: could not reach the endpoint: check the base URL and that the server is running. Details: dial tcp 127.0.0.1:9: connect: connection refused; gave up after 3 attempts"
	var batches int64
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE run_batches SET status = ?, error = ?, error_kind = 'network', response = '' WHERE run_id = ?`, []any{models.BatchFailed, refused, runID}},
		{`UPDATE run_scores SET score = NULL WHERE run_id = ?`, []any{runID}},
		{`UPDATE runs SET status = ?, error = ?, batches_failed = batches_done, missing_scores = (SELECT COUNT(*) FROM run_scores WHERE run_id = ?) WHERE id = ?`,
			[]any{models.RunFailed, "every batch of round 1 failed, even when tried again: the judge is not answering usefully (see the batches for its errors)", runID, runID}},
	} {
		if err := db.Gorm.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Gorm.Model(&models.RunBatch{}).Where("run_id = ?", runID).Count(&batches).Error; err != nil {
		t.Fatal(err)
	}

	step("open the run", chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS(`[data-testid="failures"]`)))
	if got := text(`[data-testid="failures"]`); !strings.Contains(got, "could not connect to the judge") || !strings.Contains(got, "connection refused") {
		t.Errorf("the failures card does not name the cause: %q", got)
	}
	if got := text(`[data-testid="no-answer"]`); got == "0" || got == "" {
		t.Errorf("no answer shows %q, want the failed scores", got)
	}
	if got := text(`[data-testid="unreadable"]`); got != "0" {
		t.Errorf("unreadable answers shows %q, want 0: the judge never answered", got)
	}
	if got := text(`main`); strings.Contains(got, "could not be read from the judge") {
		t.Errorf("the page says answers could not be read, though the judge never answered")
	}
	step("open the failed calls", chromedp.Click(chromedp.CSS(`[data-testid="failed-calls-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="batches"]`)))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="batch-row"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if int64(n) != batches {
		t.Errorf("the failed calls list shows %d calls, want %d", n, batches)
	}
	if got := text(`[data-testid="batches"]`); !strings.Contains(got, "connection refused") {
		t.Errorf("the failed calls list does not show the error: %.300q", got)
	}
}
