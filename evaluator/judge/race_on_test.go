//go:build race

package judge

// raceDetector: the race detector drops sync.Pool's items at random, so
// allocation counts of pooled code are not the program's.
const raceDetector = true
