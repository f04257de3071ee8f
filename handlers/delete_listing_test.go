package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// listedIn is what a confirmation page lists as going (its hidden
// "listed"; "" when it has none).
func listedIn(body string) string {
	m := regexp.MustCompile(`name="listed" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestDeleteTakesOnlyWhatThePageListed: a run launched on a dataset after
// its delete confirmation was shown is neither cancelled nor trashed by
// that confirmation: the post is refused (409) with the list as it is
// now, the run goes on, and confirming that list deletes it all. (Before,
// the post cancelled and trashed whatever existed at that moment: the new
// run's work was lost.)
func TestDeleteTakesOnlyWhatThePageListed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		path := fmt.Sprintf("/datasets/%d/delete", d.dataset.ID)
		shown := listedIn(env.get(path).Body.String())
		if !strings.HasPrefix(shown, fmt.Sprintf("dataset:%d", d.dataset.ID)) {
			t.Fatalf("the confirmation page lists %q, want the dataset first", shown)
		}
		// 50 rounds of one-sample batches: far too long to finish first.
		later := env.launch(d.launchForm("50", "1"))

		rec := env.postForm(path, url.Values{"confirm": {"yes"}, "listed": {shown}})
		body := rec.Body.String()
		if rec.Code != http.StatusConflict || !strings.Contains(body, "Nothing was moved to the trash") ||
			!strings.Contains(body, fmt.Sprintf(`href="/runs/%d"`, later)) {
			t.Fatalf("confirming the earlier list = %d, want 409 saying nothing moved and listing run %d: %.2000s", rec.Code, later, body)
		}
		run, err := env.db.GetRun(ctx, later)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status == models.RunCancelled || run.CancelRequested || run.TrashID != nil {
			t.Errorf("the run launched after the page: status %s, cancel requested %v, trash %v; want it left going", run.Status, run.CancelRequested, run.TrashID)
		}
		if _, err := env.db.FindDataset(ctx, env.ws.ID, d.dataset.ID); err != nil {
			t.Errorf("the refused deletion took the dataset: %v", err)
		}
		now := listedIn(body)
		if !strings.Contains(" "+now+" ", fmt.Sprintf(" run:%d ", later)) {
			t.Fatalf("the refusal's list %q does not hold run %d", now, later)
		}

		if rec := env.postForm(path, url.Values{"confirm": {"yes"}, "listed": {now}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("confirming the list as it is now = %d, want 303: %.600s", rec.Code, rec.Body.String())
		}
		if run, err = env.db.GetRun(ctx, later); err != nil {
			t.Fatal(err)
		}
		if run.Status != models.RunCancelled || run.TrashID == nil {
			t.Errorf("after confirming the new list: status %s, trash %v; want cancelled and in the trash", run.Status, run.TrashID)
		}
	})
}
