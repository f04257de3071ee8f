package handlers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestReviewQueueShowsWhatEveryReviewGave: the queue's page, which reads a
// reviewer's own ratings by key (queue45), shows the count, the place and
// the sample that the old reading of every review of the dataset gave
// (report.ReadBrowserReviews, then the reviewer's current review on the
// criterion's scale, rated, among the counted and the excluded ratings),
// for each signed-in reviewer (an account whose email changed, an excluded
// account, one that rated nothing), criterion and order, on a mixed
// history of 300 reviews: typed names, a typed name equal to an account's
// email (never the account's), withdrawals, ratings on another scale.
// Typed-name reviewers' pages: TestReviewQueueCountsRecomputed.
func TestReviewQueueShowsWhatEveryReviewGave(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		ed, rob := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor), env.createUser(env.ws.ID, "rob@a.test", models.RoleEditor)
		type who struct {
			name   string
			userID *int64
		}
		cid := env.createUser(env.ws.ID, "cid@a.test", models.RoleEditor)
		people := []who{{"Ann", nil}, {"Bob", nil}, {"ed@a.test", nil}, {"ed@a.test", &ed.ID}, {"ed.new@a.test", &ed.ID}, {"rob@a.test", &rob.ID}}
		rnd := rand.New(rand.NewPCG(45, 1))
		for range 300 {
			p := people[rnd.IntN(len(people))]
			crit := d.rubric.Criteria[rnd.IntN(len(d.rubric.Criteria))]
			lo, hi := crit.Lo, crit.Hi
			if rnd.IntN(6) == 0 {
				lo, hi = 0, 5
			}
			r := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[rnd.IntN(min(len(rows), 15))].ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: p.name, UserID: p.userID, RunID: &run.ID, Lo: lo, Hi: hi, Comment: "seen"}
			if rnd.IntN(4) != 0 {
				v := lo
				r.Score = &v
			}
			_, err := env.db.AddReviewRating(ctx, r)
			must(t, err)
		}
		must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, rob.ID, true, "owner"))

		// The request's workspace, as the page reads it.
		ctx = context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: env.ws, Role: models.RoleOwner})
		pre, err := report.ReadBrowserReviews(ctx, env.db, run)
		must(t, err)
		position := regexp.MustCompile(`data-testid="review-position">([\d,]+)<`)
		ratedText := regexp.MustCompile(`data-testid="review-rated">([\d,]+)<`)
		shownID := regexp.MustCompile(`<h2>Sample ([^ <]+) <a`)
		checked := 0
		for _, u := range []models.User{ed, rob, cid} {
			name, key, session := u.Email, models.ReviewerKeyOf(u.Email, &u.ID), env.sessionCookie(u)
			for ci, crit := range d.rubric.Criteria {
				if pre.Refused[ci] != nil {
					continue
				}
				scale := *pre.Scales[ci]
				// The old reading: every review of the dataset.
				var old []int64
				for _, rs := range []map[string][]models.ReviewRating{pre.ByName, pre.Excluded} {
					for rowID, cur := range splitReviews(rs[crit.Name], scale).current {
						if m := mineOf(cur, key); m != nil && m.Score != nil {
							old = append(old, rowID)
						}
					}
				}
				for _, order := range []string{orderDisagreement, orderUncertain, orderRandom} {
					who := &models.ReviewerRatings{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, Criterion: crit.Name, Reviewer: u.Email, UserID: &u.ID, Lo: scale.Lo, Hi: scale.Hi}
					qi, err := env.h.queueIndexOf(ctx, run, ci, order, 7, false, env.h.newRunReviews(), who)
					must(t, err)
					s, err := qi.at(ctx, qi.firstUnrated)
					must(t, err)
					// The count and the first unrated sample, read in SQL,
					// are every review's.
					if qi.ratedByMe != len(old) || (len(old) < qi.total && slices.Contains(old, s.RowID)) {
						t.Errorf("%s, %s, %s: %d rated, opens on row %d; every review gave %d rated rows %v", name, crit.Name, order, qi.ratedByMe, s.RowID, len(old), old)
					}
					q := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {strconv.Itoa(ci)}, "order": {order}, "seed": {"7"}}
					rec := env.send(http.MethodGet, fmt.Sprintf("/datasets/%d/review?%s", d.dataset.ID, q.Encode()), nil, "", session)
					body := rec.Body.String()
					pos, rated, id := position.FindStringSubmatch(body), ratedText.FindStringSubmatch(body), shownID.FindStringSubmatch(body)
					if rec.Code != http.StatusOK || pos == nil || rated == nil || id == nil {
						t.Fatalf("%s, %s, %s: %d, no place, count or sample shown:\n%s", name, crit.Name, order, rec.Code, pageText(body))
					}
					if want := strconv.Itoa(qi.ratedByMe); rated[1] != want {
						t.Errorf("%s, %s, %s: rated %s, every review gave %s", name, crit.Name, order, rated[1], want)
					}
					if want := strconv.Itoa(qi.firstUnrated + 1); pos[1] != want || id[1] != s.ExternalID {
						t.Errorf("%s, %s, %s: opens at %s on sample %s, every review gave %s on %s", name, crit.Name, order, pos[1], id[1], want, s.ExternalID)
					}
					if qi.ratedByMe > 0 {
						checked++
					}
				}
			}
		}
		if checked < 12 {
			t.Fatalf("only %d cases with rated samples: the history tests little", checked)
		}
	})
}
