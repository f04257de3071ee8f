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
	// From the moments as they are exported (microseconds, package
	// stamp): PostgreSQL keeps no more, so the same run says the same
	// seconds on both databases (run is a copy: the caller's is untouched).
	run.StartedAt, run.FinishedAt, run.PausedAt = micro(run.StartedAt), micro(run.FinishedAt), micro(run.PausedAt)
	if d, ok := run.Elapsed(now); ok {
		secs := math.Round(d.Seconds()*1000) / 1000
		elapsed = &secs
	}
	return elapsed, math.Round(run.PausedFor(now).Seconds()*1000) / 1000
}

// micro returns *t cut to the microsecond, nil for nil.
func micro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := t.Truncate(time.Microsecond)
	return &m
}
