package report

import "github.com/batcheval/batcheval/evaluator/stats"

// Agreement is Pearson's, Spearman's and Kendall's coefficients of judge
// scores x against human ratings y (NaN where one is missing), with their
// 95% intervals computed as a run's report computes its criteria's: the
// same rule by size, the same resamples and the same seed. A page that
// shows another agreement with the judge (one reviewer's ratings) reads
// the same as the report's table.
func Agreement(x, y []float64) stats.Correlations {
	return stats.CorrelationIntervals(x, y, stats.DefaultResamples, bootstrapSeed)
}
