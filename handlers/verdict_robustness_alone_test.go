package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestVerdictAloneBesideARobustnessRun: an experiment of a run and its
// noisy-copy run headed "run 1 (average Pearson 0.42) is the only finished
// run with figures to compare", though the noisy run had finished with
// figures (shown in the table as a change from its parent). The headline
// says the other run is a robustness run, read against its parent, not
// ranked.
func TestVerdictAloneBesideARobustnessRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		parent := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		if parent.Status != models.RunSucceeded {
			t.Fatalf("parent run %s (%s)", parent.Status, parent.Error)
		}
		noisy := env.waitRun(redirectedRun(t, env.postForm(fmt.Sprintf("/runs/%d/noise", parent.ID),
			url.Values{"delete_percent": {"5"}, "replace_percent": {"5"}, "seed": {"1"}})), 60*time.Second)
		if noisy.Status != models.RunSucceeded || noisy.ExperimentID == nil {
			t.Fatalf("noise run %s in experiment %v", noisy.Status, noisy.ExperimentID)
		}
		var body string
		for deadline := time.Now().Add(60 * time.Second); ; {
			rec := env.get(fmt.Sprintf("/experiments/%d", *noisy.ExperimentID))
			if rec.Code != http.StatusOK {
				t.Fatalf("experiment page: %d", rec.Code)
			}
			if body = rec.Body.String(); strings.Contains(body, "only finished") || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // the paired tests are being computed
		}
		head := regexp.MustCompile(`(?s)data-testid="experiment-verdict"[^>]*>(.*?)</`).FindStringSubmatch(body)
		if head == nil {
			t.Fatal("the experiment page has no headline")
		}
		if strings.Contains(head[1], "only finished run with figures to compare") {
			t.Errorf("the headline ignores the finished noise run: %q", head[1])
		}
		if !strings.Contains(head[1], "the robustness run beside it is read as a change from the run it repeats") {
			t.Errorf("the headline does not say the other run is a robustness run: %q", head[1])
		}
	})
}
