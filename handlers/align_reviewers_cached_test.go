package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// agreementFigures writes the alignment page's reviewers' tables figure by
// figure (reviewer, marks, counts, every coefficient, p-value and interval
// bound, NaN as NaN), so two computations compare bit for bit.
func agreementFigures(ts []web.ReviewerAgreementTable) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s %v\n", t.Criterion, t.Intervals)
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "  %s excluded=%v former=%v rated=%d why=%q %#v\n", r.Reviewer.ReviewerKey(), r.Reviewer.Excluded, r.Reviewer.FormerMember, r.Rated, r.Why, r.Correlations)
		}
	}
	return b.String()
}

// TestReviewerAgreementComputedOncePerRatings: the alignment page's
// per-reviewer agreement table draws its bootstrap intervals once per run,
// criterion and ratings (reviewperf51), not at every view: a second view
// computes nothing; a rating added or withdrawn recomputes only that
// reviewer's figures; an exclusion and a readmission recompute nothing and
// move only the mark. After every step the table served equals, figure by
// figure, a fresh computation by another server process (nothing in its
// memory), and the figures change when a rating changes them. Both
// databases. It fails on the old code: each view computed every reviewer's
// figures again (2 computations on the second view, checked).
func TestReviewerAgreementComputedOncePerRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run, crit, rows, fay, viewer := reviewersSetUp(t, env, "reviewers-cached")
		levels := int(crit.Hi-crit.Lo) + 1
		rate := func(who string, user *int64, row int, k int, withdraw bool) {
			t.Helper()
			v := crit.Lo + float64(k%levels)
			r := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: rows[row].ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: who, UserID: user, RunID: &run.ID, Lo: crit.Lo, Hi: crit.Hi, Score: &v}
			if withdraw {
				r.Score, r.Comment = nil, "withdrawn"
			}
			_, err := env.db.AddReviewRating(ctx, r)
			must(t, err)
		}
		for i := range 10 {
			rate("Ann", nil, i, i*7/3, false)
			rate(fay.Email, &fay.ID, i+2, i*i, false)
		}
		var computed atomic.Int64
		env.h.reports.mu.Lock()
		env.h.reports.agree = func(x, y []float64) stats.Correlations {
			computed.Add(1)
			return report.Agreement(x, y)
		}
		env.h.reports.mu.Unlock()
		fresh, _ := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		path := fmt.Sprintf("/runs/%d/align", run.ID)
		var last string
		steps := []struct {
			name     string
			change   func()
			computes int64 // the figures computed by the view after it
			moves    bool  // whether the figures change
			excluded bool  // whether Fay is marked excluded
		}{
			{"first view", func() {}, 2, true, false},
			{"second view", func() {}, 0, false, false},
			{"Ann rates one more", func() { rate("Ann", nil, 11, 2, false) }, 1, true, false},
			{"Fay excluded", func() { must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, fay.ID, true, "owner")) }, 0, false, true},
			{"Fay readmitted", func() { must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, fay.ID, false, "owner")) }, 0, false, false},
			{"Fay withdraws one", func() { rate(fay.Email, &fay.ID, 5, 0, true) }, 1, true, false},
			{"Ann changes one", func() { rate("Ann", nil, 3, 3*7/3+1, false) }, 1, true, false},
			{"a view again", func() {}, 0, false, false},
		}
		for _, st := range steps {
			st.change()
			before := computed.Load()
			rec := env.getAs(path, viewer)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: GET %s: %d", st.name, path, rec.Code)
			}
			if got := computed.Load() - before; got != st.computes {
				t.Errorf("%s: the view computed %d reviewers' figures, want %d", st.name, got, st.computes)
			}
			served, err := env.h.reviewerAgreements(env.localCtx(), env.ws.ID, run)
			must(t, err)
			if got := computed.Load() - before; got != st.computes {
				t.Errorf("%s: reading the table again computed %d, want %d in all", st.name, got, st.computes)
			}
			again, err := fresh.reviewerAgreements(env.localCtx(), env.ws.ID, run)
			must(t, err)
			fresh.reports.mu.Lock()
			clear(fresh.reports.agreements)
			fresh.reports.mu.Unlock()
			s, f := agreementFigures(served), agreementFigures(again)
			if s != f {
				t.Fatalf("%s: served\n%s\nfresh\n%s", st.name, s, f)
			}
			if len(served) != 1 || len(served[0].Rows) != 2 {
				t.Fatalf("%s: want one criterion with Ann and Fay:\n%s", st.name, s)
			}
			for _, r := range served[0].Rows {
				if r.Reviewer.UserID != nil && r.Reviewer.Excluded != st.excluded {
					t.Errorf("%s: Fay marked excluded %v, want %v", st.name, r.Reviewer.Excluded, st.excluded)
				}
			}
			figures := func(s string) string { // without the marks
				return strings.NewReplacer("excluded=true", "", "excluded=false", "").Replace(s)
			}
			if moved := figures(s) != figures(last); moved != st.moves {
				t.Errorf("%s: figures changed %v, want %v:\nbefore\n%s\nafter\n%s", st.name, moved, st.moves, last, s)
			}
			last = s
		}
	})
}
