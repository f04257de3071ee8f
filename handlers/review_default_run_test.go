package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewQueueOpensOnTheNewestCompletedRun: the dataset's queue opened
// without a run follows the newest run that went through all its calls,
// not a newer one that is still running, paused or was stopped part-way
// (whose order rests on the few samples it judged and changes as it goes
// on); with no completed run, the newest; a run asked for is kept.
func TestReviewQueueOpensOnTheNewestCompletedRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		older := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		newer := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		followed := func(path string) int64 {
			t.Helper()
			body := env.get(path).Body.String()
			i := strings.Index(body, `<input type="hidden" name="run" value="`)
			if i < 0 {
				t.Fatalf("%s: no review form:\n%s", path, body)
			}
			var id int64
			fmt.Sscanf(body[i+len(`<input type="hidden" name="run" value="`):], "%d", &id)
			return id
		}
		setStatus := func(run models.Run, status string) {
			t.Helper()
			must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("status", status).Error)
		}
		for _, tc := range []struct {
			newer, older string
			want         int64
		}{
			{models.RunSucceeded, models.RunSucceeded, newer.ID},
			{models.RunFinishedWithGaps, models.RunSucceeded, newer.ID},
			{models.RunPaused, models.RunSucceeded, older.ID},
			{models.RunRunning, models.RunSucceeded, older.ID},
			{models.RunCancelled, models.RunFinishedWithGaps, older.ID},
			{models.RunFailed, models.RunSucceeded, older.ID},
			{models.RunPaused, models.RunCancelled, newer.ID},
		} {
			setStatus(newer, tc.newer)
			setStatus(older, tc.older)
			if got := followed(queue + "?blind=off"); got != tc.want {
				t.Errorf("newer %s, older %s: the queue follows run %d, want %d", tc.newer, tc.older, got, tc.want)
			}
		}
		setStatus(newer, models.RunPaused)
		setStatus(older, models.RunSucceeded)
		if got := followed(fmt.Sprintf("%s?run=%d", queue, newer.ID)); got != newer.ID {
			t.Errorf("asked for the paused run %d: the queue follows %d", newer.ID, got)
		}
	})
}

// TestReviewQueueRunChoiceTellsRunsApart: two runs of one rubric on one
// dataset share their name; the queue's run choice offered two identical
// lines. Each now starts with the run's id, and one that is not complete
// says how it stands.
func TestReviewQueueRunChoiceTellsRunsApart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		older := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		newer := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id IN ?", []int64{older.ID, newer.ID}).Update("name", "Same name").Error)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", newer.ID).Update("status", models.RunPaused).Error)
		body := env.get(fmt.Sprintf("/datasets/%d/review", d.dataset.ID)).Body.String()
		for _, want := range []string{
			fmt.Sprintf(`<option value="%d" selected>run %d · Same name (simulated judge)</option>`, older.ID, older.ID),
			fmt.Sprintf(`<option value="%d">run %d · Same name (simulated judge) · paused</option>`, newer.ID, newer.ID),
		} {
			if !strings.Contains(body, want) {
				t.Errorf("run choice: want %s", want)
			}
		}
	})
}
