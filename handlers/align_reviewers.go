package handlers

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// This file holds each reviewer's agreement with the judge, which the
// run's alignment page shows (showAlignStart): a team lead reads there
// which reviewer agrees with the judge and which does not (a careless
// reviewer, or a judge that matches one person's taste) before aligning
// the judge with their ratings.

// reviewerAgreements is, for each criterion of a finished run that
// browser reviewers rated on its scale, each reviewer's agreement with the
// judge: their current ratings of the run's samples (the latest review of
// each sample on the criterion's scale holding a rating, as the reports
// and the queue count them) against the judge's final scores of those
// samples, with the coefficients and intervals of the run's report
// (report.Agreement). An excluded reviewer (an owner left their ratings
// out of every figure) is listed too, marked: their agreement is what
// tells a careless reviewer. A run still going has no final scores yet:
// nil. The error is a *preparingError while a large run's results are
// being stored.
func (h *Handlers) reviewerAgreements(ctx context.Context, wsID int64, run models.Run) ([]web.ReviewerAgreementTable, error) {
	if !run.Completed() {
		return nil, nil
	}
	scales, refused, err := h.DB.RunHumanScales(ctx, run)
	if err != nil {
		return nil, err
	}
	onScale := map[string]evaluator.Scale{}
	for ci, crit := range run.RubricSnapshot.Criteria {
		if refused[ci] == nil {
			onScale[crit.Name] = scales[ci]
		}
	}
	current, err := h.DB.ListCurrentRatings(ctx, wsID, run.DatasetID, onScale, 0)
	if err != nil {
		return nil, err
	}
	marks, err := h.raterMarksOf(ctx, wsID)
	if err != nil {
		return nil, err
	}
	rr := h.newRunReviews()
	var out []web.ReviewerAgreementTable
	for ci, crit := range run.RubricSnapshot.Criteria {
		if _, ok := onScale[crit.Name]; !ok || !slices.ContainsFunc(current[crit.Name], func(r models.ReviewRating) bool { return r.Score != nil }) {
			continue
		}
		as, err := h.alignSamplesOf(ctx, run, ci, false, false, rr)
		if err != nil {
			return nil, err
		}
		finals := make(map[int64]*float64, len(as.scores))
		for _, s := range as.scores {
			finals[s.RowID] = s.Final
		}
		out = append(out, agreementTable(crit.Name, current[crit.Name], finals, marks))
	}
	return out, nil
}

// agreementTable is one criterion's reviewers' agreement with the judge,
// from their current reviews rs and the judge's final score of each of the
// run's samples (finals, by row id; nil where the score is missing). A
// rating of a sample the run does not hold is not one of this run's.
func agreementTable(criterion string, rs []models.ReviewRating, finals map[int64]*float64, marks raterMarks) web.ReviewerAgreementTable {
	type reviewer struct {
		who      models.ReviewRating
		judge, y []float64
	}
	byKey := map[string]*reviewer{}
	var order []*reviewer
	for _, r := range rs {
		final, inRun := finals[r.RowID]
		if r.Score == nil || !inRun {
			continue
		}
		rv := byKey[r.ReviewerKey()]
		if rv == nil {
			rv = &reviewer{who: r}
			rv.who.FormerMember, rv.who.Excluded = marks.of(r)
			byKey[r.ReviewerKey()] = rv
			order = append(order, rv)
		}
		x := math.NaN() // a sample whose score is missing is left out (Missing)
		if final != nil {
			x = *final
		}
		rv.judge, rv.y = append(rv.judge, x), append(rv.y, *r.Score)
	}
	slices.SortStableFunc(order, func(a, b *reviewer) int {
		return cmp.Or(cmp.Compare(a.who.AnnotatorName(), b.who.AnnotatorName()), cmp.Compare(a.who.ReviewerKey(), b.who.ReviewerKey()))
	})
	t := web.ReviewerAgreementTable{Criterion: criterion}
	for _, rv := range order {
		cs := report.Agreement(rv.judge, rv.y)
		t.Rows = append(t.Rows, web.ReviewerAgreement{Reviewer: rv.who, Rated: len(rv.y), Correlations: cs,
			Why: agreementUndefinedWhy(cs.Pearson, rv.judge, rv.y)})
		if l := cs.Interval.Label(stats.DefaultResamples); l != "" && !slices.Contains(t.Intervals, l) {
			t.Intervals = append(t.Intervals, l)
		}
	}
	return t
}

// agreementUndefinedWhy says why a reviewer's coefficients are undefined,
// in the words the run page uses for its rounds (runRoundMissing): too few
// samples with both a score and a rating, or one side gave every sample
// the same; "" when Pearson's is a number.
func agreementUndefinedWhy(p stats.Correlation, judge, ratings []float64) string {
	if !math.IsNaN(p.Coef) {
		return ""
	}
	if p.N < 3 {
		return "too few samples: fewer than 3 have both a judge score and this reviewer's rating"
	}
	var js, ys []float64
	for i := range judge {
		if !math.IsNaN(judge[i]) {
			js, ys = append(js, judge[i]), append(ys, ratings[i])
		}
	}
	if slices.Min(ys) == slices.Max(ys) {
		return "undefined: this reviewer gave every sample the same rating"
	}
	if slices.Min(js) == slices.Max(js) {
		return "undefined: the judge gave every one of these samples the same score"
	}
	return "undefined"
}
