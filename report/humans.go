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
	Items      int
	// Alpha is Krippendorff's alpha (interval metric).
	Alpha float64
	// LeaveOneOut is the mean correlation (Pearson) of each annotator with
	// the mean of the others.
	LeaveOneOut float64
	// Reading compares the judge with the ceiling in plain words.
	Reading string
}

// ceilingOf computes the human ceiling, nil when fewer than two annotators.
func ceilingOf(cols []string, rows []models.DatasetRow, judge float64) *Ceiling {
	if len(cols) < 2 {
		return nil
	}
	ratings := make([][]float64, len(rows))
	items := 0
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
		}
	}
	loo, _ := stats.LeaveOneOutCorrelation(stats.MethodPearson, ratings)
	alpha := stats.KrippendorffAlphaInterval(ratings)
	// The reading is shown beside alpha: it must not call the humans'
	// agreement unmeasured when alpha measured it.
	return &Ceiling{Annotators: len(cols), Items: items, Alpha: alpha,
		LeaveOneOut: loo, Reading: stats.InterpretCeilingWithAlpha(judge, loo, alpha, items)}
}
