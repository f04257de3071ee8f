package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// TestRunPageCountsTheCurrentRatingsAsBefore: the run page's human-source
// box counts the browser ratings, those not in the report yet and the
// withdrawn ones it still counts from the current reviews now and as of
// the cut-off (report.ReadBrowserReviews), no longer from every review of
// the dataset, and gives what every review gave; the live figures' cache
// key of the reviewers (reviewersKey) is the same too. The counts are
// checked against a reading of every whole review by hand: one withdrawn
// rating still counted per reviewer and sample (it was one per reviewer
// at most: a reviewer who withdrew two ratings since the recompute, or
// withdrew one and then rated another sample, was counted once or not at
// all). On the history of report's TestPagesReadTheCurrentRatingsAsBefore
// (dbtest.MakeRatingsHistory), with ratings after the cut-off, under the
// browser and both sources.
func TestRunPageCountsTheCurrentRatingsAsBefore(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, env.db, env.ws.ID, d.dataset.ID, rows, d.rubric.Criteria, 47, 600)
		excluded, err := env.db.ExcludedRaters(ctx, env.ws.ID)
		must(t, err)
		session := env.sessionCookie(env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner))
		pending := regexp.MustCompile(`data-testid="human-source-pending">(\d+|1) browser rating`)
		withdrawn := regexp.MustCompile(`data-testid="human-source-withdrawn">(\d+|1) withdrawn rating`)
		for _, source := range []models.HumanSource{models.HumansBrowser, models.HumansBoth} {
			// Accounts exist now: the owner signs in to recompute.
			if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {string(source)}}, "", session); rec.Code != http.StatusSeeOther {
				t.Fatalf("%s: choose the source: %d", source, rec.Code)
			}
			choice, err := env.db.FindRunHumanSource(ctx, run.ID)
			must(t, err)
			hist.Review(120) // after the cut-off
			cur, err := report.ReadBrowserReviews(ctx, env.db, run)
			must(t, err)
			// The read before: every review of the dataset's criteria.
			old := &report.BrowserReviews{Scales: cur.Scales, Refused: cur.Refused, Excluded: map[string][]models.ReviewRating{}}
			var names []string
			for ci, crit := range d.rubric.Criteria {
				if cur.Scales[ci] != nil {
					names = append(names, crit.Name)
				}
			}
			old.ByName, err = env.db.ListCriteriaRatings(ctx, env.ws.ID, d.dataset.ID, names, 0)
			must(t, err)
			readOld, readNew := 0, 0
			for name, rs := range old.ByName {
				readOld += len(rs)
				readNew += len(cur.ByName[name]) + len(cur.Excluded[name])
				kept, _ := models.WithoutExcluded(rs, excluded)
				for _, r := range rs {
					if r.UserID != nil && excluded[*r.UserID] {
						old.Excluded[name] = append(old.Excluded[name], r)
					}
				}
				old.ByName[name] = kept
			}
			if readNew >= readOld {
				t.Fatalf("%s: read %d reviews, every review is %d", source, readNew, readOld)
			}
			rep, err := report.BuildWith(ctx, env.db, env.ws.ID, run.ID, report.Options{Reviews: cur})
			must(t, err)
			vOld, vNew := humanSourceView(run, rep, old, true), humanSourceView(run, rep, cur, true)
			if !reflect.DeepEqual(vOld, vNew) {
				t.Errorf("%s: the box says\n%+v\nwhere every review gave\n%+v", source, vNew, vOld)
			}
			if a, b := reviewersKey(old), reviewersKey(cur); a != b || b == "" {
				t.Errorf("%s: live figures' reviewers key %q, every review gave %q", source, b, a)
			}
			// By hand, from every whole review.
			var ratings, notUsed, still int
			for ci, crit := range d.rubric.Criteria {
				if cur.Scales[ci] == nil {
					continue
				}
				all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.dataset.ID, crit.Name, 0)
				must(t, err)
				now, then := map[string]models.ReviewRating{}, map[string]models.ReviewRating{}
				for _, r := range all {
					if r.Lo != cur.Scales[ci].Lo || r.Hi != cur.Scales[ci].Hi || (r.UserID != nil && excluded[*r.UserID]) {
						continue
					}
					k := strconv.FormatInt(r.RowID, 10) + " " + r.ReviewerKey()
					if l, ok := now[k]; !ok || r.ID > l.ID {
						now[k] = r
					}
					if l, ok := then[k]; r.ID <= choice.UptoRatingID && (!ok || r.ID > l.ID) {
						then[k] = r
					}
				}
				for k, r := range now {
					if r.Score != nil {
						ratings++
						if r.ID > choice.UptoRatingID {
							notUsed++
						}
					} else if b, ok := then[k]; ok && b.Score != nil && r.ID > choice.UptoRatingID {
						still++
					}
				}
			}
			if vNew.BrowserRatings != ratings || vNew.NotUsed != notUsed || vNew.Withdrawn != still {
				t.Errorf("%s: %d ratings, %d not used, %d withdrawn still counted; every whole review gives %d, %d, %d",
					source, vNew.BrowserRatings, vNew.NotUsed, vNew.Withdrawn, ratings, notUsed, still)
			}
			// Counted in SQL, as a finished run's page does (ratings48).
			counted, err := env.h.countedHumanSourceView(ctx, run, rep, true)
			must(t, err)
			if counted.BrowserRatings != ratings || counted.NotUsed != notUsed || counted.Withdrawn != still || !reflect.DeepEqual(counted, vOld) {
				t.Errorf("%s: counted in SQL, %d ratings, %d not used, %d withdrawn still counted; every whole review gives %d, %d, %d",
					source, counted.BrowserRatings, counted.NotUsed, counted.Withdrawn, ratings, notUsed, still)
			}
			if notUsed == 0 || still < 2 {
				t.Fatalf("%s: %d not used, %d withdrawn: the history tests little", source, notUsed, still)
			}
			// The page says the same.
			body := env.send(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), nil, "", session).Body.String()
			p, w := pending.FindStringSubmatch(body), withdrawn.FindStringSubmatch(body)
			if p == nil || w == nil || p[1] != strconv.Itoa(notUsed) || w[1] != strconv.Itoa(still) {
				t.Errorf("%s: the run page says %v not in the report and %v withdrawn, want %d and %d", source, p, w, notUsed, still)
			}
		}
	})
}
