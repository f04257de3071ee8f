package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPagesSayImportedRatingsStandApart: under "imported column and
// browser ratings", when every imported rating of a criterion is one value
// outside the rubric's scale, no mapping onto the scale exists, the two
// are not averaged and every sample's combined rating is missing. The
// sample page, the review queue and a share link's sample page still gave
// the general reason ("no human rating in the dataset for this sample,
// and not rated yet in the browser"), which is wrong for a sample that has
// both. They now say the report's reason, each to its reader.
func TestPagesSayImportedRatingsStandApart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		// The ratings are edited before the launch: the runner stores the
		// finished run's figures in the background, and an edit after the
		// run ended could land after that computation read the ratings, so
		// the stored figures (and the pages' reasons) came from before it;
		// under load the sample page then gave the general reason.
		crit := d.rubric.Criteria[0]
		if crit.HumanColumn == "" {
			t.Fatal("the demo rubric's first criterion has no human column")
		}
		off := crit.Hi + 4 // one value, outside the rubric's scale
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		for _, r := range rows {
			for k := range r.Ratings {
				if k == crit.HumanColumn || strings.HasPrefix(k, crit.HumanColumn+"@") {
					v := off
					r.Ratings[k] = &v
				}
			}
			r.Ratings[crit.HumanColumn] = &off
			must(t, env.db.Gorm.Model(&models.DatasetRow{ID: r.ID}).Select("ratings").Updates(models.DatasetRow{Ratings: r.Ratings}).Error)
		}
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		if got := run.RubricSnapshot.Criteria[0]; got.Name != crit.Name || got.HumanColumn != crit.HumanColumn || got.Lo != crit.Lo || got.Hi != crit.Hi {
			t.Fatalf("the run's first criterion %+v is not the rubric's %+v", got, crit)
		}
		rated := rows[0] // imported and browser ratings, still no combined one
		score := crit.Lo
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rated.ID,
			Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Rita", Score: &score, Lo: crit.Lo, Hi: crit.Hi})
		must(t, err)
		env.h.forgetReports(run.ID)
		env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}})
		if src, err := env.db.FindRunHumanSource(ctx, run.ID); err != nil || src.Source != models.HumansBoth {
			t.Fatalf("human source %+v, %v; want both", src, err)
		}

		num := strconv.FormatFloat(off, 'g', 4, 64)
		why := fmt.Sprintf("the imported ratings (all %s) lie outside the rubric's %s to %s, the browser ratings' scale, and one value cannot be put on it, so no sample's imported and browser ratings were averaged: ",
			num, strconv.FormatFloat(crit.Lo, 'g', 4, 64), strconv.FormatFloat(crit.Hi, 'g', 4, 64))
		member := why + "recompute the report with the imported column or the browser ratings alone"
		outside := why + "an editor of the run's workspace can recompute the report with the imported column or the browser ratings alone"
		general := "no human rating in the dataset for this sample"

		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		queue := (queueQuery{RunID: run.ID, Criterion: 0, Order: orderDisagreement, Seed: defaultQueueSeed}).url(d.dataset.ID, 0)
		pages := []struct {
			name, path, want string
			shared           bool
		}{
			{"sample page, rated in the browser", fmt.Sprintf("/runs/%d/samples/%d", run.ID, rated.ID), member, false},
			{"sample page, not rated in the browser", fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[1].ID), member, false},
			{"review queue", queue, member, false},
			{"share link's sample page", fmt.Sprintf("%s/samples/%d", link, rated.ID), outside, true},
		}
		for _, p := range pages {
			t.Run(p.name, func(t *testing.T) {
				rec := env.get(p.path)
				if p.shared {
					rec = env.getAs(p.path)
				}
				body := rec.Body.String()
				if rec.Code != 200 {
					t.Fatalf("%s: %d", p.path, rec.Code)
				}
				if !strings.Contains(body, escapeText(p.want)) {
					t.Errorf("%s does not say %q", p.path, p.want)
				}
				if strings.Contains(body, general) {
					t.Errorf("%s still gives the general reason %q", p.path, general)
				}
			})
		}
	})
}
