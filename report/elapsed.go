package report

import (
	"math"
	"time"

	"github.com/batcheval/batcheval/models"
)

// RunSeconds is how long the run has been going at now, in seconds to the
// millisecond (nil before it started), and the time it spent paused or
// finished before a resume, which the first leaves out (models.Run.Elapsed
// and PausedFor). The API's run, the JSON export's envelope and the
// report's facts say the same figures.
func RunSeconds(run models.Run, now time.Time) (elapsed *float64, paused float64) {
	if d, ok := run.Elapsed(now); ok {
		secs := math.Round(d.Seconds()*1000) / 1000
		elapsed = &secs
	}
	return elapsed, math.Round(run.PausedFor(now).Seconds()*1000) / 1000
}
