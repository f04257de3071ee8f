// Package paper holds reproductions of the BatchEval paper's findings and
// cost figures on the shared data sets, through the real runner.
//
// Everything lives in _test.go files: TestPaperFindings checks the paper's
// qualitative claims (heterogeneous batches have less batch bias than
// homogeneous ones; the N-round ensemble beats a single round) with a fake
// judge whose behaviour is written down, and the benchmarks measure calls,
// tokens and cost per sample of every method against the simulated judge.
// BENCHMARKS.md at the repository root records the numbers.
package paper
