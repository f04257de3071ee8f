package handlers

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestExperimentAveragesOverSharedCriteria: each run's average Pearson in
// the experiment table left out only its own undefined criteria, so a run
// whose scores did not vary on a hard criterion was ranked on an average
// over the easier ones, ahead of a run that had a figure on all of them,
// while the paired test of the two averages over the criteria both have.
// The table now averages (and ranks) every run over the criteria all
// finished runs have a Pearson r for, says which were left out and why,
// and keeps each run's own per-criterion figures in their columns.
func TestExperimentAveragesOverSharedCriteria(t *testing.T) {
	nan := math.NaN()
	names := []string{"Coherence", "Likeable", "Overall"}
	rep := func(pearson ...float64) *report.Report {
		r := &report.Report{}
		for k, p := range pearson {
			r.Criteria = append(r.Criteria, report.CriterionReport{Criterion: evaluator.Criterion{Name: names[k]}, HasHuman: true,
				Pearson:  stats.Correlation{Coef: p, N: 30, P: nan, CILow: nan, CIHigh: nan},
				Spearman: stats.Correlation{Coef: p - 0.05, N: 30, P: nan, CILow: nan, CIHigh: nan}})
		}
		return r
	}
	fig := func(id int64, name string, status string, r *report.Report) runFigures {
		return runFigures{run: models.Run{ID: id, Name: name, Status: status}, rep: r,
			avgP: averagePearson(r), avgS: averageCoef(r, func(c report.CriterionReport) float64 { return c.Spearman.Coef }),
			tokens: nan, partial: status == models.RunRunning}
	}
	figs := []runFigures{
		// Own average 0.450 over Coherence and Overall: Likeable undefined.
		fig(1, "Flat", models.RunSucceeded, rep(0.6, nan, 0.3)),
		// Own average 0.383 over all three; 0.475 over the two Flat has.
		fig(2, "Full", models.RunSucceeded, rep(0.55, 0.2, 0.4)),
		// Still going, its Overall undefined so far: not compared, so it
		// does not take Overall out of the others' averages.
		fig(3, "Going", models.RunRunning, rep(0.5, 0.5, nan)),
	}
	avg := alignAverages(figs, names)

	want := map[string]float64{"Flat": 0.45, "Full": 0.475, "Going": 0.5}
	for _, f := range figs {
		if math.Abs(f.avgP-want[f.run.Name]) > 1e-12 {
			t.Errorf("%s: average Pearson %.4f, want %.4f (over Coherence and Overall)", f.run.Name, f.avgP, want[f.run.Name])
		}
		if math.Abs(f.avgS-(want[f.run.Name]-0.05)) > 1e-12 {
			t.Errorf("%s: average Spearman %.4f, want %.4f", f.run.Name, f.avgS, want[f.run.Name]-0.05)
		}
	}
	if len(avg.kept) != 2 || avg.kept[0] != 0 || avg.kept[1] != 2 {
		t.Errorf("criteria averaged %v, want [0 2] (Coherence, Overall)", avg.kept)
	}
	for _, s := range []string{"Averages are over Coherence and Overall, the criteria every finished run has a Pearson r for",
		"Left out: Likeable (Flat: the scores or the ratings do not vary, so no Pearson r)", "own figure for a left-out criterion stays in its column"} {
		if !strings.Contains(avg.note, s) {
			t.Errorf("note %q\nshould say %q", avg.note, s)
		}
	}

	// The table marks Full best on the shared criteria and keeps every
	// run's own per-criterion figures.
	rows := experimentRows(figs, len(names))
	if rows[1].AvgPearson.Text != "0.475" || !rows[1].AvgPearson.Best || rows[0].AvgPearson.Text != "0.450" || rows[0].AvgPearson.Best {
		t.Errorf("average Pearson cells: Flat %+v, Full %+v; want Full 0.475 best, Flat 0.450", rows[0].AvgPearson, rows[1].AvgPearson)
	}
	if rows[1].Pearson[1].Text != "0.200" || rows[0].Pearson[0].Text != "0.600" || rows[0].Pearson[1].Text == "—" {
		t.Errorf("per-criterion cells changed: Full Likeable %q, Flat Coherence %q, Flat Likeable %q",
			rows[1].Pearson[1].Text, rows[0].Pearson[0].Text, rows[0].Pearson[1].Text)
	}
	// The headline ranks the same way, before its paired test.
	if cs := rankContenders(figs, func(best, other runFigures) stats.AveragedDifference { return stats.AveragedDifference{P: 0.5} }); cs[0].fig.run.Name != "Full" {
		t.Errorf("headline ranks %s first, want Full", cs[0].fig.run.Name)
	}

	// With every criterion defined for every finished run nothing is left
	// out and there is no note.
	same := []runFigures{fig(1, "A", models.RunSucceeded, rep(0.6, 0.1, 0.3)), fig(2, "B", models.RunSucceeded, rep(0.55, 0.2, 0.4))}
	if a := alignAverages(same, names); a.note != "" || len(a.kept) != 3 || math.Abs(same[0].avgP-1.0/3) > 1e-12 {
		t.Errorf("all criteria defined: note %q, kept %v, A's average %.4f; want no note, all three, 0.3333", a.note, a.kept, same[0].avgP)
	}
}

// TestCompareAverageOverGivenCriteria: the headline's paired test averages
// over the criteria the table does, not every criterion both runs have.
func TestCompareAverageOverGivenCriteria(t *testing.T) {
	mk := func(scores [][]float64, human [][]float64) *report.Report {
		r := &report.Report{}
		for k := range scores {
			c := report.CriterionReport{Criterion: evaluator.Criterion{Name: "c", Lo: 1, Hi: 5}, HasHuman: true}
			for i := range scores[k] {
				s, h := scores[k][i], human[k][i]
				c.Samples = append(c.Samples, report.SampleResult{RowID: int64(i + 1), Final: &s, Human: &h})
			}
			r.Criteria = append(r.Criteria, c)
		}
		return r
	}
	human := [][]float64{{1, 2, 3, 4, 5, 2}, {5, 4, 3, 2, 1, 3}, {2, 2, 4, 4, 5, 1}}
	a := mk([][]float64{{1, 2, 3, 5, 4, 2}, {4, 4, 3, 2, 1, 3}, {2, 3, 4, 4, 5, 1}}, human)
	b := mk([][]float64{{2, 1, 3, 4, 5, 3}, {5, 3, 3, 1, 2, 4}, {1, 2, 5, 4, 4, 2}}, human)
	all := report.CompareAverage(a, b, true)
	some := report.CompareAverage(a, b, true, 0, 2)
	if all.Criteria != 3 || some.Criteria != 2 {
		t.Fatalf("criteria averaged: %d without a list, %d over [0 2]; want 3 and 2", all.Criteria, some.Criteria)
	}
	if some.A == all.A {
		t.Errorf("averaging over [0 2] gave the average over all three (%.4f)", some.A)
	}
}
