package handlers

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Comparing by address with a run that has no scores says that run B,
// by name, has none (QA: it read "undefined: a run or the humans gave
// every sample the same score", the wrong reason), and says "yet" for a
// run still going.
func TestCompareNamesTheRunWithoutScores(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		scored := env.waitRun(env.launch(d.launchForm("1", "10")), 30*time.Second)
		form := d.launchForm("5", "15")
		form.Set("name", "Wrong key run")
		failed, _ := env.runOnFakeJudge("Wrong key", refusingJudge(http.StatusUnauthorized, "Incorrect API key provided"), form)
		rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d", scored.ID, failed.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("compare = %d: %s", rec.Code, rec.Body)
		}
		body := html.UnescapeString(rec.Body.String())
		want := fmt.Sprintf(`Run B, “%s”, has no scores at all: it ended (failed) before scoring a sample`, failed.Name)
		for _, id := range []string{"agreement-reading", "runs-reading"} {
			got := testidBlock(body, id)
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q: %s", id, want, got)
			}
			if strings.Contains(got, "same score") {
				t.Errorf("%s gives the wrong reason: %s", id, got)
			}
		}
		// Still going: "yet".
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?`, failed.ID).Error)
		body = html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", scored.ID, failed.ID)).Body.String())
		if got := testidBlock(body, "agreement-reading"); !strings.Contains(got, fmt.Sprintf(`Run B, “%s”, has no scores yet: it is still running.`, failed.Name)) {
			t.Errorf("a running run B: %s", got)
		}
		// Both scored: the usual verdict, no such sentence.
		other := env.waitRun(env.launch(d.launchForm("2", "10")), 30*time.Second)
		body = html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", scored.ID, other.ID)).Body.String())
		if got := testidBlock(body, "agreement-reading"); strings.Contains(got, "has no scores") {
			t.Errorf("two scored runs: %s", got)
		}
	})
}

// A run cancelled after scoring one criterion but before the other
// (explore31: a run cancelled mid-way with its first answers on the
// second criterion) has scores: comparing on the criterion it did not
// reach says it has none on that criterion, not "no scores at all ...
// before scoring a sample", which its page and exports contradict.
func TestCompareRunCancelledBeforeOneCriterion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		scored := env.waitRun(env.launch(d.launchForm("1", "10")), 30*time.Second)
		form := d.launchForm("1", "10")
		form.Set("name", "Cut short")
		cut := env.waitRun(env.launch(form), 30*time.Second)
		// As the run stands when it is cancelled with only the second
		// criterion's batches answered.
		var first int
		must(t, env.db.Gorm.Raw(`SELECT COUNT(*) FROM run_batches WHERE run_id = ? AND criterion_index = 0`, cut.ID).Scan(&first).Error)
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND criterion_index = 0`, cut.ID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE run_batches SET status = 'pending' WHERE run_id = ? AND criterion_index = 0`, cut.ID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = 'cancelled', batches_done = batches_done - ? WHERE id = ?`, first, cut.ID).Error)

		crit := d.rubric.Criteria[0].Name
		body := html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=0", scored.ID, cut.ID)).Body.String())
		want := fmt.Sprintf(`Run B, “%s”, has no score on %s: it ended (cancelled) before a sample was scored on it`, "Cut short", crit)
		for _, id := range []string{"agreement-reading", "runs-reading"} {
			got := testidBlock(body, id)
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q: %s", id, want, got)
			}
			if strings.Contains(got, "no scores at all") {
				t.Errorf("%s says the run has no scores at all, though it scored %s: %s", id, d.rubric.Criteria[1].Name, got)
			}
		}
	})
}
