package report

import "github.com/batcheval/batcheval/evaluator/stats"

// Agreement is Pearson's, Spearman's and Kendall's coefficients of judge
// scores x against human ratings y (NaN where one is missing), with their
// 95% intervals by the rule by size, the resamples and the seed of a
// run's report: its criteria's figures (fillCriterion) are computed here,
// and so is any other agreement with the judge a page shows (one
// reviewer's ratings), so the two cannot drift apart.
func Agreement(x, y []float64) stats.Correlations {
	return stats.CorrelationIntervals(x, y, stats.DefaultResamples, bootstrapSeed)
}
