package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// withSystems is the fixture with a "system" column: a and b come from
// S1 and S2, c and d from S3.
func withSystems() (models.Run, models.Dataset, []models.DatasetRow, []models.RunBatch, []models.RunScore) {
	run, ds, rows, batches, scores := fixture()
	ds.Columns = []string{"text", "g", "System"}
	for i, s := range []string{"S1", "S2", "S3", "S3"} {
		rows[i].Data["System"] = s
	}
	return run, ds, rows, batches, scores
}

func TestSystemLevelInReport(t *testing.T) {
	run, ds, rows, batches, scores := withSystems()
	rep := ComputeWith(run, ds, rows, batches, scores, Options{})
	c := rep.Criteria[0]
	if c.SystemColumn != "System" {
		t.Fatalf("SystemColumn = %q, want the dataset's System column", c.SystemColumn)
	}
	// Finals a 1.2, b 1.5, c 2.7, d none; humans 0, 1, 3, 4. System means:
	// judge 1.2, 1.5, 2.7 against humans 0, 1, 3 (d has no judge score).
	// dx = -0.6, -0.3, 0.9 and dy = -4/3, -1/3, 5/3: Sxy = 2.4,
	// Sxx = 1.26, Syy = 42/9, r = 2.4/sqrt(1.26·42/9) = 0.989743.
	want := map[stats.Method]float64{stats.MethodPearson: 2.4 / math.Sqrt(1.26*42/9), stats.MethodSpearman: 1, stats.MethodKendall: 1}
	for m, w := range want {
		got := c.System[m]
		if math.Abs(got.Coef-w) > 1e-12 || got.Systems != 3 || got.N != 3 {
			t.Errorf("%s: %+v, want %g over 3 systems", m, got, w)
		}
	}
	if off := ComputeWith(run, ds, rows, batches, scores, Options{SystemColumn: NoSystem}).Criteria[0]; off.SystemColumn != "" || off.System != nil {
		t.Errorf("NoSystem still computed %q", off.SystemColumn)
	}
	// Grouping by g as systems: two systems only, so undefined, not a number.
	byG := ComputeWith(run, ds, rows, batches, scores, Options{SystemColumn: "g"}).Criteria[0]
	if byG.SystemColumn != "g" || !math.IsNaN(byG.System[stats.MethodPearson].Coef) {
		t.Errorf("two systems: %q %+v, want column g with an undefined coefficient", byG.SystemColumn, byG.System[stats.MethodPearson])
	}
	if plain := Compute(fixture()).Criteria[0]; plain.SystemColumn != "" {
		t.Errorf("no system column, but SystemColumn = %q", plain.SystemColumn)
	}
}

func TestDefaultSystemColumn(t *testing.T) {
	for _, tc := range []struct {
		cols []string
		want string
	}{
		{[]string{"id", "system", "context"}, "system"},
		{[]string{"id", "context_id", "System_ID", "response"}, "System_ID"},
		{[]string{"id", "system_id", "system"}, "system"},
		{[]string{"id", "systems"}, ""},
	} {
		if got := DefaultSystemColumn(tc.cols); got != tc.want {
			t.Errorf("DefaultSystemColumn(%v) = %q, want %q", tc.cols, got, tc.want)
		}
	}
}

func TestPairScoresAndCompare(t *testing.T) {
	run, ds, rows, batches, scores := fixture()
	a := Compute(run, ds, rows, batches, scores)
	// Run B on a noisy copy: new row ids, same sample ids, one sample
	// fewer, and its own scores.
	rowsB := make([]models.DatasetRow, 3)
	for i := range rowsB {
		rowsB[i] = rows[i]
		rowsB[i].ID = 100 + rows[i].ID
	}
	var scoresB []models.RunScore
	for i, v := range []float64{3, 2, 1} {
		scoresB = append(scoresB, models.RunScore{Round: 0, RowID: rowsB[i].ID, Score: &v})
	}
	b := Compute(run, ds, rowsB, nil, scoresB)
	p := PairScores(a, b, 0, false)
	if p.Unmatched != 1 || len(p.A) != 3 {
		t.Fatalf("pairs %+v, want 3 matched by id and 1 unmatched", p)
	}
	if p.A[0] != 1.2 || p.B[0] != 3 || p.Human[2] != 3 {
		t.Errorf("pairs %+v, want a: 1.2 vs 3 and c's human rating 3", p)
	}
	if same := PairScores(a, b, 0, true); len(same.A) != 0 || same.Unmatched != 4 {
		t.Errorf("matched by row across datasets: %+v", same)
	}
	// Three samples: the difference exists, but nothing can be tested.
	for _, d := range CompareCriterion(a, b, 0, false) {
		if !math.IsNaN(d.P()) || !math.IsNaN(d.CILow) {
			t.Errorf("%s on 3 samples: p %g, interval from %g; want undefined", d.Method, d.P(), d.CILow)
		}
	}
	if avg := CompareAverage(a, b, false); !math.IsNaN(avg.Diff) || !math.IsNaN(avg.P) {
		t.Errorf("average over too few samples: %+v, want undefined", avg)
	}
}

// The same run stored in another order (scores and batches listed
// differently) gives a byte-identical export and identical system-level
// figures.
func TestReportIgnoresStorageOrder(t *testing.T) {
	run, ds, rows, batches, scores := withSystems()
	render := func(batches []models.RunBatch, scores []models.RunScore) string {
		rep := ComputeWith(run, ds, rows, batches, scores, Options{})
		var b strings.Builder
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		for _, m := range stats.Methods() {
			s := rep.Criteria[0].System[m]
			fmt.Fprintf(&b, "%x %x %x\n", math.Float64bits(s.Coef), math.Float64bits(s.CILow), math.Float64bits(s.CIHigh))
		}
		return b.String()
	}
	want := render(batches, scores)
	rs := slices.Clone(scores)
	slices.Reverse(rs)
	rb := slices.Clone(batches)
	slices.Reverse(rb)
	if got := render(rb, rs); got != want {
		t.Errorf("reversed storage order changed the report:\n%s\nvs\n%s", got, want)
	}
}

// The G-Eval defect: final scores that are all 7/3 but come from different
// sums (…35 and …3) gave Spearman -0.664. They are one score: every
// agreement figure is undefined, in the report and in its export.
func TestReportNoiseConstantScoresUndefined(t *testing.T) {
	run, ds, rows, batches, _ := fixture()
	run.Settings.Rounds = 1
	var scores []models.RunScore
	for i, v := range []float64{2.3333333333333335, 2.333333333333333, 2.3333333333333335, 2.333333333333333} {
		scores = append(scores, models.RunScore{Round: 0, RowID: rows[i].ID, Label: i + 1, Score: &v})
	}
	rep := Compute(run, ds, rows, batches, scores)
	c := rep.Criteria[0]
	for name, corr := range map[string]stats.Correlation{"pearson": c.Pearson, "spearman": c.Spearman, "kendall": c.Kendall} {
		if !math.IsNaN(corr.Coef) || !math.IsNaN(corr.P) || !math.IsNaN(corr.CILow) || !math.IsNaN(corr.CIHigh) {
			t.Errorf("%s = %+v, want undefined", name, corr)
		}
	}
	var b strings.Builder
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	compact := strings.Join(strings.Fields(b.String()), "")
	for _, m := range stats.Methods() {
		if want := `"` + string(m) + `":{"coef":null,"p":null`; !strings.Contains(compact, want) {
			t.Errorf("export lacks %s", want)
		}
	}
}
