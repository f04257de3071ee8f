package report

import (
	"math"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// Ceiling is how well humans agree with each other on a criterion: the
// best agreement a judge can be expected to reach with their average.
type Ceiling struct {
	Annotators int
	// Items are the samples rated by two or more annotators: those the
	// humans' agreement (Alpha, LeaveOneOut) is over.
	Items int
	// Judged are the samples the judge's correlation with the average
	// human is over (its n), and Both those of them among Items: the two
	// figures the ceiling compares are over different samples unless
	// Both, Judged and Items are one number.
	Judged, Both int
	// Alpha is Krippendorff's alpha (interval metric).
	Alpha float64
	// LeaveOneOut is the mean correlation (Pearson) of each annotator with
	// the mean of the others.
	LeaveOneOut float64
	// Reading compares the judge with the ceiling in plain words.
	Reading string
}

// ceilingOf computes the human ceiling, nil when fewer than two annotators.
// samples are the criterion's, one a row, and judge its correlation with
// the average human.
func ceilingOf(cols []string, rows []models.DatasetRow, samples []SampleResult, judge stats.Correlation) *Ceiling {
	if len(cols) < 2 {
		return nil
	}
	ratings := make([][]float64, len(rows))
	items, both := 0, 0
	for i, r := range rows {
		ratings[i] = make([]float64, len(cols))
		n := 0
		for a, c := range cols {
			ratings[i][a] = math.NaN()
			if v, ok := r.Ratings[c]; ok && v != nil {
				ratings[i][a] = *v
				n++
			}
		}
		if n >= 2 {
			items++
			if i < len(samples) && paired(samples[i]) {
				both++
			}
		}
	}
	// The ceiling is Pearson's, as the judge's figure it is set against
	// (judge is the criterion's Pearson); the reading names it so.
	const m = stats.MethodPearson
	loo, _ := stats.LeaveOneOutCorrelation(m, ratings)
	alpha := stats.KrippendorffAlphaInterval(ratings)
	// The reading is shown beside alpha: it must not call the humans'
	// agreement unmeasured when alpha measured it.
	return &Ceiling{Annotators: len(cols), Items: items, Judged: judge.N, Both: both, Alpha: alpha,
		LeaveOneOut: loo, Reading: stats.InterpretCeilingWithAlpha(m, judge.Coef, loo, alpha, items)}
}

// paired reports whether s is among the pairs of the judge's correlation
// with the average human (stats.Pairs): a final score and a human rating,
// both finite.
func paired(s SampleResult) bool {
	return s.Final != nil && s.Human != nil && !math.IsNaN(*s.Final) && !math.IsInf(*s.Final, 0) &&
		!math.IsNaN(*s.Human) && !math.IsInf(*s.Human, 0)
}
