package handlers

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestOldLLMEvalRunSaysWhyBrowserRatingsDoNotCount: an LLM-Eval run
// stored before runs kept the rubric's scale, and without its rubric
// version, cannot say which scale people rate its criteria on, so its
// report counts no browser rating of them. Under browser ratings its
// sample pages said "not rated yet in the browser" of every sample, one
// rated on the rubric's scale too, where other runs say "rated on another
// scale" or "not rated". They now say that no browser rating counts in
// this run, why, and what mends it, to a member and to a share link's
// reader.
func TestOldLLMEvalRunSaysWhyBrowserRatingsDoNotCount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		run := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		rated, other := rows[0], rows[1]
		crit := run.RubricSnapshot.Criteria[1]
		scale := crit.HumanScale()
		for _, who := range []string{"Rita", "Sam"} {
			score := scale.Lo + 1
			_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rated.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, Score: &score, Lo: scale.Lo, Hi: scale.Hi})
			must(t, err)
		}
		env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
		if src, err := env.db.FindRunHumanSource(ctx, run.ID); err != nil || src.Source != models.HumansBrowser {
			t.Fatalf("human source %+v, %v; want browser", src, err)
		}

		// Made old: no rubric scale kept, no rubric version.
		old := run.RubricSnapshot
		for i := range old.Criteria {
			old.Criteria[i].RubricScale = nil
		}
		b, err := json.Marshal(old)
		must(t, err)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Updates(map[string]any{"rubric_snapshot": string(b), "rubric_version": nil}).Error)
		env.h.forgetReports(run.ID)

		num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		why := "no browser rating of " + crit.Name + " counts in this run, rated or not: it is an LLM-Eval run that scored on its own " +
			num(crit.Lo) + " to " + num(crit.Hi) + " scale and does not record the rubric's scale (it was launched before runs kept it), " +
			"so which scale the ratings should be on cannot be told: "
		member := why + "launch the LLM-Eval run again to use them"
		outside := why + "someone of the run's workspace can launch the LLM-Eval run again to use them"
		general := "not rated yet in the browser"

		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		for _, p := range []struct {
			name, path, want string
			shared           bool
		}{
			{"rated sample's page", fmt.Sprintf("/runs/%d/samples/%d", run.ID, rated.ID), member, false},
			{"unrated sample's page", fmt.Sprintf("/runs/%d/samples/%d", run.ID, other.ID), member, false},
			{"share link's page of the rated sample", fmt.Sprintf("%s/samples/%d", link, rated.ID), outside, true},
		} {
			t.Run(p.name, func(t *testing.T) {
				rec := env.get(p.path)
				if p.shared {
					rec = env.getAs(p.path)
				}
				if rec.Code != 200 {
					t.Fatalf("%s: %d", p.path, rec.Code)
				}
				body := rec.Body.String()
				if !strings.Contains(body, escapeText(p.want)) {
					t.Errorf("%s does not say %q", p.path, p.want)
				}
				if strings.Contains(body, general) {
					t.Errorf("%s still says %q", p.path, general)
				}
			})
		}
	})
}
