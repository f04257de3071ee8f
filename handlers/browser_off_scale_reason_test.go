package handlers

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPagesSayBrowserRatingsOnAnotherScale: under browser ratings, a
// sample whose browser ratings were all given on another scale than the
// rubric's (a form of an older rubric version, or an LLM-Eval run's 0 to 5
// before forms asked on the rubric's scale) has no human rating, since a
// rating on another scale is not one on this scale. The sample page, the
// review queue and a share link's sample page said "not rated yet in the
// browser", wrong for a sample that was rated; they now say on which
// scale it was rated, that it does not count, and what mends it, each to
// its reader.
func TestPagesSayBrowserRatingsOnAnotherScale(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "5")), 60*time.Second)
		crit := run.RubricSnapshot.Criteria[0]
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		rated, other := rows[0], rows[1]
		offHi := crit.Hi + 5 // a scale the rubric's criterion is not on
		for _, who := range []string{"Rita", "Sam"} {
			score := crit.Lo + 1
			_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rated.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, Score: &score, Lo: crit.Lo, Hi: offHi})
			must(t, err)
		}
		// One on the scale elsewhere, so the browser ratings can be chosen.
		score := crit.Lo
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[2].ID,
			Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "Rita", Score: &score, Lo: crit.Lo, Hi: crit.Hi})
		must(t, err)
		env.h.forgetReports(run.ID)
		env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}})
		if src, err := env.db.FindRunHumanSource(ctx, run.ID); err != nil || src.Source != models.HumansBrowser {
			t.Fatalf("human source %+v, %v; want browser", src, err)
		}

		num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		on := num(crit.Lo) + " to " + num(crit.Hi)
		why := "its browser ratings were all given on " + num(crit.Lo) + " to " + num(offHi) + ", not on the rubric's " + on + " that the report reads, so none counts: "
		member := why + "rate it again on " + on
		outside := why + "someone of the run's workspace can rate it again on " + on
		general := "not rated yet in the browser"

		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		pages := []struct {
			name, path, want string
			shared           bool
		}{
			{"sample page", fmt.Sprintf("/runs/%d/samples/%d", run.ID, rated.ID), member, false},
			{"share link's sample page", fmt.Sprintf("%s/samples/%d", link, rated.ID), outside, true},
		}
		// The review queue's sample at rated's place in the queue.
		for i := range rows {
			q := (queueQuery{RunID: run.ID, Criterion: 0, Order: orderDisagreement, Seed: defaultQueueSeed}).url(d.dataset.ID, i)
			if body := env.get(q).Body.String(); strings.Contains(body, ">"+rated.ExternalID+"<") || strings.Contains(body, "/samples/"+strconv.FormatInt(rated.ID, 10)+`"`) {
				pages = append(pages, struct {
					name, path, want string
					shared           bool
				}{"review queue", q, member, false})
				break
			}
		}
		if len(pages) != 3 {
			t.Fatal("the review queue never shows the sample rated on another scale")
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
				// The other criteria, nobody rated in the browser, still
				// say so; the queue shows the first criterion only.
				want := len(run.RubricSnapshot.Criteria) - 1
				if p.name == "review queue" {
					want = 0
				}
				// Counted outside the "Judged alongside" tables, which say
				// it of the batch's other samples.
				own := regexp.MustCompile(`(?s)<table class="small mates" data-testid="mates">.*?</table>`).ReplaceAllString(body, "")
				if n := strings.Count(own, general); n != want {
					t.Errorf("%s says %q %d times, want %d (one per other criterion): the sample rated on another scale still says it", p.path, general, n, want)
				}
			})
		}
		// A sample nobody rated still says so.
		if body := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, other.ID)).Body.String(); !strings.Contains(body, general) || strings.Contains(body, "that the report reads") {
			t.Errorf("the page of a sample nobody rated does not say %q, or speaks of another scale", general)
		}
	})
}
