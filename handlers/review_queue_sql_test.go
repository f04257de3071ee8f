package handlers

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// oldStoredQueueMarks is how storedQueueIndex counted a reviewer's rated
// samples and found the first unrated place before reviews46: the rated
// row ids read into Go (ListReviewerRatedRows), sent back as IN lists for
// their ranks (ListRunSampleRanks) and filtered in Go. Kept for the tests
// and the benchmark that compare the SQL filtering with it.
func oldStoredQueueMarks(ctx context.Context, h *Handlers, runID int64, ci int, sort, dir string, total int, perm []int, who *models.ReviewerRatings) (rated, first int, err error) {
	var ids []int64
	if who != nil {
		if ids, err = h.DB.ListReviewerRatedRows(ctx, who.WorkspaceID, who.DatasetID, who.Criterion, who.Reviewer, who.UserID, who.Lo, who.Hi); err != nil {
			return 0, 0, err
		}
	}
	ranks, err := h.DB.ListRunSampleRanks(ctx, runID, ci, sort, dir, ids)
	if err != nil {
		return 0, 0, err
	}
	taken := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		taken[r.Rank] = true
	}
	for k := range total {
		r := k
		if perm != nil {
			r = perm[k]
		}
		if !taken[r] {
			return len(ranks), k, nil
		}
	}
	return len(ranks), 0, nil
}

// queueOrderSorts are the queue's orders with the stored ranks each reads
// (storedQueueIndex).
var queueOrderSorts = []struct{ order, sort, dir string }{
	{orderDisagreement, "diff", "desc"}, {orderUncertain, "spread", "desc"}, {orderRandom, "position", "asc"},
}

// TestReviewQueueFiltersRatedInSQL: a finished run's queue counts the
// reviewer's rated samples and opens on their first unrated one from SQL
// (storedQueueIndex: models.ReviewerQueueMarks,
// EachReviewerRatedRank) exactly as the rated
// ids read into Go and filtered there gave (oldStoredQueueMarks), in
// every order, for a typed name and an account: nothing rated, part rated
// (with overwritten, withdrawn and off-scale ratings), all rated, only
// other reviewers' ratings, and ratings given from another run of the
// dataset (they count) beside ratings of another dataset (they do not).
func TestReviewQueueFiltersRatedInSQL(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		acct := env.createUser(env.ws.ID, "ann@q.test", models.RoleEditor)
		type rate struct {
			who      string // "ann", "acct", "bob"
			rows     []int  // row positions
			score    bool   // with a rating (else a comment: withdraws)
			offScale bool
			otherRun bool // given from the dataset's second run
			otherDS  bool // on the other dataset's rows
		}
		span := func(a, b int) []int {
			var out []int
			for i := a; i < b; i++ {
				out = append(out, i)
			}
			return out
		}
		const n = 40
		cases := []struct {
			name      string
			rates     []rate
			wantRated int // for both the typed name and the account
			wantFirst map[string]int
		}{
			{name: "empty", wantRated: 0, wantFirst: map[string]int{orderDisagreement: 0, orderUncertain: 0, orderRandom: 0}},
			{name: "partly rated", rates: []rate{
				{who: "ann", rows: span(0, 25), score: true}, {who: "acct", rows: span(0, 25), score: true},
				{who: "ann", rows: span(3, 8), score: true}, {who: "acct", rows: span(3, 8), score: true}, // overwritten
				{who: "ann", rows: span(10, 15)}, {who: "acct", rows: span(10, 15)}, // withdrawn
				{who: "ann", rows: span(30, 35), score: true, offScale: true}, {who: "acct", rows: span(30, 35), score: true, offScale: true},
			}, wantRated: 20},
			{name: "all rated", rates: []rate{{who: "ann", rows: span(0, n), score: true}, {who: "acct", rows: span(0, n), score: true}},
				wantRated: n, wantFirst: map[string]int{orderDisagreement: 0, orderUncertain: 0, orderRandom: 0}},
			{name: "other reviewers' ratings", rates: []rate{{who: "bob", rows: span(0, n), score: true}},
				wantRated: 0, wantFirst: map[string]int{orderDisagreement: 0, orderUncertain: 0, orderRandom: 0}},
			{name: "another run's and another dataset's", rates: []rate{
				{who: "ann", rows: span(0, 12), score: true, otherRun: true}, {who: "acct", rows: span(0, 12), score: true, otherRun: true},
				{who: "ann", rows: span(0, n), score: true, otherDS: true}, {who: "acct", rows: span(0, n), score: true, otherDS: true},
			}, wantRated: 12},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ds, ids := synthDataset(t, env.db, env.project, n)
				runID := synthRunOn(t, env.db, env.project, ds, ids, 0)
				otherRun := synthRunOn(t, env.db, env.project, ds, ids, 1)
				ods, oids := synthDataset(t, env.db, env.project, n)
				must(t, report.StoreStats(ctx, env.db, env.ws.ID, runID))
				run, err := env.db.FindRun(ctx, env.ws.ID, runID)
				must(t, err)
				crit := run.RubricSnapshot.Criteria[0]
				for _, r := range tc.rates {
					for _, pos := range r.rows {
						rv := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: ds.ID, RowID: ids[pos], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
							RunID: &runID, Lo: crit.Lo, Hi: crit.Hi, Comment: "seen"}
						switch r.who {
						case "ann":
							rv.Reviewer = "Ann"
						case "bob":
							rv.Reviewer = "Bob"
						case "acct":
							rv.Reviewer, rv.UserID = acct.Email, &acct.ID
						}
						if r.otherRun {
							rv.RunID = &otherRun
						}
						if r.otherDS {
							rv.DatasetID, rv.RowID, rv.RunID = ods.ID, oids[pos], nil
						}
						if r.offScale {
							rv.Lo, rv.Hi = 0, 10
						}
						if r.score {
							v := rv.Lo + float64(pos%3)
							rv.Score = &v
						}
						_, err := env.db.AddReviewRating(ctx, rv)
						must(t, err)
					}
				}
				// The request's workspace, as the page reads it.
				ctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: env.ws, Role: models.RoleOwner})
				sum, err := env.h.storedResults(ctx, run, env.h.newRunReviews())
				must(t, err)
				if sum == nil {
					t.Fatal("the run has no stored results: the test would not reach storedQueueIndex")
				}
				for _, who := range []*models.ReviewerRatings{
					{WorkspaceID: env.ws.ID, DatasetID: ds.ID, Criterion: crit.Name, Reviewer: "Ann", Lo: crit.Lo, Hi: crit.Hi},
					{WorkspaceID: env.ws.ID, DatasetID: ds.ID, Criterion: crit.Name, Reviewer: acct.Email, UserID: &acct.ID, Lo: crit.Lo, Hi: crit.Hi},
				} {
					for _, o := range queueOrderSorts {
						var perm []int
						if o.order == orderRandom {
							perm = randomOrder(n, 7)
						}
						wantRated, wantFirst, err := oldStoredQueueMarks(ctx, env.h, runID, 0, o.sort, o.dir, n, perm, who)
						must(t, err)
						qi, ranked, err := env.h.storedQueueIndex(ctx, sum, 0, o.order, 7, who)
						must(t, err)
						label := fmt.Sprintf("%s, %s", who.Reviewer, o.order)
						if !ranked {
							t.Fatalf("%s: not ranked", label)
						}
						if qi.ratedByMe != wantRated || qi.firstUnrated != wantFirst {
							t.Errorf("%s: %d rated, first unrated at %d; the ids filtered in Go gave %d, %d", label, qi.ratedByMe, qi.firstUnrated, wantRated, wantFirst)
						}
						if qi.ratedByMe != tc.wantRated {
							t.Errorf("%s: %d rated, want %d", label, qi.ratedByMe, tc.wantRated)
						}
						if w, ok := tc.wantFirst[o.order]; ok && qi.firstUnrated != w {
							t.Errorf("%s: first unrated at %d, want %d", label, qi.firstUnrated, w)
						}
						// The place shown is the first sample not rated.
						if qi.ratedByMe < n {
							mine, err := env.db.ListReviewerRatedRows(ctx, who.WorkspaceID, who.DatasetID, who.Criterion, who.Reviewer, who.UserID, who.Lo, who.Hi)
							must(t, err)
							s, err := qi.at(ctx, qi.firstUnrated)
							must(t, err)
							if slices.Contains(mine, s.RowID) {
								t.Errorf("%s: the first unrated place shows row %d, which the reviewer rated", label, s.RowID)
							}
						}
					}
				}
			})
		}
	})
}
