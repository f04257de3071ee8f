package report

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkPageReadsCurrentRatings times, on SQLite in one process, what a
// request that passes a run's browser reviews to its report reads and
// does with them: the run page and live figures (ReadBrowserReviews, then
// the page's count of the current ratings now and the report's ratings as
// of the cut-off, reviewsOfChoice) and the review queue and sample page
// (ReadChosenReviews, then reviewsOfChoice). Old: every review of the
// run's criteria (readBrowserReviews, the read before reviews47); new: the
// current reviews (now and at the cut-off, or at the cut-off alone). On
// benchRatingsHistory with one sample in ten rated again after the
// cut-off; both must give the same ratings. Median of five of each, ratio
// old over new, bytes allocated. Run with -benchtime=1x.
func BenchmarkPageReadsCurrentRatings(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		db, wsID, run, choice, n := benchRatingsHistory(b, 10)
		type took struct {
			d     time.Duration
			bytes uint64
		}
		type outcome struct {
			now, held int
			use       HumanUse
		}
		measure := func(read func() *BrowserReviews) (took, outcome) {
			var ts []took
			var out outcome
			for range 5 {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				pre := read()
				now := 0
				for i, crit := range run.RubricSnapshot.Criteria {
					if pre.Scales[i] != nil {
						now += len(models.CurrentReviews(models.OnScale(pre.ByName[crit.Name], *pre.Scales[i])))
					}
				}
				u, _, err := reviewsOfChoice(ctx, db, wsID, run, choice, pre)
				must(b, err)
				d := time.Since(start)
				runtime.ReadMemStats(&m1)
				ts = append(ts, took{d, m1.TotalAlloc - m0.TotalAlloc})
				out = outcome{now: now, use: u}
				for _, rs := range pre.ByName {
					out.held += len(rs)
				}
			}
			slices.SortFunc(ts, func(a, b took) int { return int(a.d - b.d) })
			return ts[2], out
		}
		for _, c := range []struct {
			name     string
			old, cur func() *BrowserReviews
		}{
			{"run page (ReadBrowserReviews)", func() *BrowserReviews {
				pre, err := readBrowserReviews(ctx, db, run, choice.UptoRatingID, 0)
				must(b, err)
				return pre
			}, func() *BrowserReviews {
				pre, err := ReadBrowserReviews(ctx, db, run)
				must(b, err)
				return pre
			}},
			{"queue, sample page (ReadChosenReviews)", func() *BrowserReviews {
				pre, err := readBrowserReviews(ctx, db, run, choice.UptoRatingID, 0)
				must(b, err)
				return pre
			}, func() *BrowserReviews {
				pre, err := ReadChosenReviews(ctx, db, run)
				must(b, err)
				return pre
			}},
		} {
			old, o := measure(c.old)
			cur, w := measure(c.cur)
			if o.use.BrowserRatings != w.use.BrowserRatings || o.use.BrowserRatings == 0 || !slices.Equal(keysOf(o.use), keysOf(w.use)) {
				b.Fatalf("%s: the new read uses %d ratings, the old %d", c.name, w.use.BrowserRatings, o.use.BrowserRatings)
			}
			if c.name[0] == 'r' && o.now != w.now {
				b.Fatalf("%s: %d current ratings now, the old read %d", c.name, w.now, o.now)
			}
			b.Logf("%s: %d samples, %d reviews held before, %d now; %d ratings used, %d current now: old %v (%d MB allocated), new %v (%d MB): %.2fx faster, %.1fx less allocated",
				c.name, n, o.held, w.held, w.use.BrowserRatings, o.now, old.d.Round(time.Millisecond), old.bytes>>20, cur.d.Round(time.Millisecond), cur.bytes>>20,
				float64(old.d)/float64(cur.d), float64(old.bytes)/float64(max(cur.bytes, 1)))
		}
	}
}

// keysOf is the keys of the ratings a report used, by criterion.
func keysOf(u HumanUse) []string {
	var ks []string
	for _, c := range u.Criteria {
		ks = append(ks, c.Key)
	}
	return ks
}
