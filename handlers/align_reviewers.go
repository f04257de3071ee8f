package handlers

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
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
		out = append(out, agreementTable(crit.Name, current[crit.Name], finals, marks, h.reports.agreementOf(run.ID, crit.Name)))
	}
	return out, nil
}

// agreementTable is one criterion's reviewers' agreement with the judge,
// from their current reviews rs and the judge's final score of each of the
// run's samples (finals, by row id; nil where the score is missing). A
// rating of a sample the run does not hold is not one of this run's.
// agree computes a reviewer's coefficients and intervals from the judge's
// scores and their ratings (report.Agreement, or its cache: agreementOf).
func agreementTable(criterion string, rs []models.ReviewRating, finals map[int64]*float64, marks raterMarks, agree func(x, y []float64) stats.Correlations) web.ReviewerAgreementTable {
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
		cs := agree(rv.judge, rv.y)
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

// agreementKey names one reviewer's agreement with the judge on a run's
// criterion by what it is computed from: the judge's scores and the
// reviewer's ratings of the samples both hold, in order (a hash of their
// bits). Any rating added, changed or withdrawn, and any score, changes
// the key; an exclusion or readmission changes no figure of the table
// (an excluded reviewer is listed with their agreement, marked), only the
// mark, which is read at each view.
type agreementKey struct {
	run       int64
	criterion string
	inputs    [sha256.Size]byte
}

// agreementOf is report.Agreement for run's criterion, served from the
// cache when the same scores and ratings were computed before: the same
// inputs give the same figures bit for bit (a fixed seed), so a view
// while nothing changed draws no bootstrap resample.
func (rc *reportCache) agreementOf(run int64, criterion string) func(x, y []float64) stats.Correlations {
	return func(x, y []float64) stats.Correlations {
		k := agreementKey{run: run, criterion: criterion, inputs: agreementInputs(x, y)}
		rc.mu.Lock()
		cs, ok := rc.agreements[k]
		compute := rc.agree
		rc.mu.Unlock()
		if ok {
			return cs
		}
		if compute == nil {
			compute = report.Agreement
		}
		cs = compute(x, y)
		rc.mu.Lock()
		if len(rc.agreements) >= agreementCacheSize {
			clear(rc.agreements)
		}
		rc.agreements[k] = cs
		rc.mu.Unlock()
		return cs
	}
}

// agreementCacheSize bounds the reviewers' agreements kept: a few reviewers
// on a few criteria of the runs being aligned; each is a few words. A full
// cache starts again empty.
const agreementCacheSize = 4096

// agreementInputs hashes the judge's scores x and the ratings y (equal
// lengths) bit for bit, a missing score (NaN) included.
func agreementInputs(x, y []float64) [sha256.Size]byte {
	h := sha256.New()
	buf := make([]byte, 8)
	binary.LittleEndian.PutUint64(buf, uint64(len(x)))
	h.Write(buf)
	for _, s := range [][]float64{x, y} {
		for _, v := range s {
			binary.LittleEndian.PutUint64(buf, math.Float64bits(v))
			h.Write(buf)
		}
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
