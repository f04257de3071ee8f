package models_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPIRateLimitAcrossMinuteTurn: a token with a limit of 600 a minute
// sends 600 requests at 12:00:59 and 600 more at 12:01:00. The fixed
// per-minute counts let all 1,200 through (the second 600 opened a new
// minute); the limit now lets through the first 600 and, of the second
// burst, only what the second between them gave back (600/60 = 10). Then
// the allowance comes back steadily: another 10 a second later, the whole
// 600 a minute after the last request let through. What each answer says
// (remaining, reset, retry after) is checked along the way.
func TestAPIRateLimitAcrossMinuteTurn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		const limit = 600
		at := time.Date(2026, 12, 5, 12, 0, 59, 0, time.UTC)
		burst := func(at time.Time, n int) (passed int, last models.RateDecision) {
			for range n {
				d, err := db.TakeAPIRate(ctx, 7, models.RateRequests, limit, at)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					passed++
				}
				last = d
			}
			return passed, last
		}
		first, d := burst(at, limit)
		if first != limit || d.Remaining != 0 || d.Reset != time.Minute {
			t.Fatalf("first burst: %d of %d passed, last says remaining %d, reset %v; want all, 0, 1m", first, limit, d.Remaining, d.Reset)
		}
		second, d := burst(at.Add(time.Second), limit)
		if second != 10 {
			t.Errorf("second burst, a second later across the minute's turn: %d passed, want 10 (600 a minute give back 10 a second)", second)
		}
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 100*time.Millisecond {
			t.Errorf("the last of the second burst: %+v, want refused with a retry after of at most one request's share (100ms)", d)
		}
		// Refused requests are not counted: a second on, 10 more pass.
		if third, _ := burst(at.Add(2*time.Second), 20); third != 10 {
			t.Errorf("a second after the second burst: %d of 20 passed, want 10", third)
		}
		// Another token and another bucket have their own allowance.
		if d, err := db.TakeAPIRate(ctx, 8, models.RateRequests, limit, at.Add(2*time.Second)); err != nil || !d.Allowed || d.Remaining != limit-1 {
			t.Errorf("another token: %+v %v, want let through with %d remaining", d, err, limit-1)
		}
		if d, err := db.TakeAPIRate(ctx, 7, models.RateLaunches, 30, at.Add(2*time.Second)); err != nil || !d.Allowed || d.Remaining != 29 {
			t.Errorf("the token's launches: %+v %v, want let through with 29 remaining", d, err)
		}
		// A minute after the last request let through, the whole limit.
		if again, _ := burst(at.Add(2*time.Second+time.Minute), limit+1); again != limit {
			t.Errorf("a minute after: %d of %d passed, want %d", again, limit+1, limit)
		}
	})
}

// TestAPIRateLimitConcurrentProcesses: requests of one token sent at the
// same moment from two processes (two connection pools on one database),
// many at a time, never pass the limit together: each is decided by one
// statement on the row the one before it left. With the clock held still,
// exactly the limit passes.
func TestAPIRateLimitConcurrentProcesses(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			dbs := []*models.DB{dbtest.OpenDSN(t, dsn), dbtest.OpenDSN(t, dsn)}
			const limit, each = 50, 60
			at := time.Date(2026, 12, 5, 12, 0, 59, 0, time.UTC)
			var passed atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, 2*each)
			for _, db := range dbs {
				for range each {
					wg.Add(1)
					go func() {
						defer wg.Done()
						dec, err := db.TakeAPIRate(context.Background(), 1, models.RateRequests, limit, at)
						if err != nil {
							errs <- err
							return
						}
						if dec.Allowed {
							passed.Add(1)
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n := passed.Load(); n != limit {
				t.Errorf("%d of %d concurrent requests passed a limit of %d", n, 2*each, limit)
			}
		})
	}
}

// TestAPIRateLimitDatabaseClock: without a time given, the database's
// clock decides, and the answers are those of a fresh allowance.
func TestAPIRateLimitDatabaseClock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		for i := 1; i <= 4; i++ {
			d, err := db.TakeAPIRate(context.Background(), 3, models.RateLaunches, 3, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if want := i <= 3; d.Allowed != want || (want && d.Remaining != 3-i) {
				t.Errorf("request %d: %+v, want allowed %v with %d remaining", i, d, want, 3-i)
			}
			if !d.Allowed && (d.RetryAfter <= 0 || d.RetryAfter > 20*time.Second) {
				t.Errorf("refused request %d: retry after %v, want up to 20s (a minute / 3)", i, d.RetryAfter)
			}
		}
	})
}
