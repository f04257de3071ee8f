package models_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// newLimitedJudge stores a judge with the given shared limits.
func newLimitedJudge(t *testing.T, db *models.DB, l models.JudgeLimits) int64 {
	t.Helper()
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	j := models.Judge{WorkspaceID: ws.ID, Name: "limited", BaseURL: "http://judge.example/v1", Model: "m"}
	if err := db.SaveJudge(ctx, &j); err != nil {
		t.Fatal(err)
	}
	l.JudgeID = j.ID
	if err := db.SetJudgeLimits(ctx, l); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// letPass makes ms milliseconds pass for the judge's stored times (slot
// expiries, the last cut, the last refill), which follow the database's
// clock: it moves them back rather than the clock forward.
func letPass(t *testing.T, db *models.DB, judgeID, ms int64) {
	t.Helper()
	if err := db.Gorm.Exec("UPDATE judge_slots SET expires_ms = expires_ms - ? WHERE judge_id = ? AND holder <> ''", ms, judgeID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm.Exec("UPDATE judge_limits SET last_cut_ms = last_cut_ms - ?, refilled_ms = refilled_ms - ? WHERE judge_id = ?", ms, ms, judgeID).Error; err != nil {
		t.Fatal(err)
	}
}

func TestJudgeSlots(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		id := newLimitedJudge(t, db, models.JudgeLimits{MaxConcurrency: 2})
		const lease = 30 * time.Second
		steps := []struct {
			name   string
			do     func() (bool, error)
			want   bool
			wantIn int
		}{
			{"first slot", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "a", lease) }, true, 1},
			{"second slot", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "b", lease) }, true, 2},
			{"no third", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "c", lease) }, false, 2},
			{"release a", func() (bool, error) { return true, db.ReleaseJudgeSlot(ctx, id, "a") }, true, 1},
			{"c takes the freed slot", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "c", lease) }, true, 2},
			// A worker that died holding its slots gives them back when
			// their lease runs out (b's and c's both have; d holds one).
			{"expired leases are taken over", func() (bool, error) {
				letPass(t, db, id, lease.Milliseconds()+1)
				return db.AcquireJudgeSlot(ctx, id, "d", lease)
			}, true, 1},
			{"and so is the other", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "e", lease) }, true, 2},
			{"none is left", func() (bool, error) { return db.AcquireJudgeSlot(ctx, id, "f", lease) }, false, 2},
		}
		for _, s := range steps {
			got, err := s.do()
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got != s.want {
				t.Errorf("%s: got %v, want %v", s.name, got, s.want)
			}
			if n, _ := db.JudgeSlotsHeld(ctx, id); n != s.wantIn {
				t.Errorf("%s: %d slots held, want %d", s.name, n, s.wantIn)
			}
		}
	})
}

func TestJudgeAdaptiveConcurrency(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		id := newLimitedJudge(t, db, models.JudgeLimits{MaxConcurrency: 8})
		limit := func() int {
			l, err := db.FindJudgeLimits(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return l.AdaptiveLimit
		}
		cut := func(after time.Duration) error {
			letPass(t, db, id, after.Milliseconds())
			return db.CutJudgeConcurrency(ctx, id)
		}
		steps := []struct {
			name string
			do   func() error
			want int
		}{
			{"starts at the maximum", func() error { return nil }, 8},
			{"a 429 halves it", func() error { return cut(0) }, 4},
			{"429s within a second count once", func() error { return cut(500 * time.Millisecond) }, 4},
			{"a later one halves again", func() error { return cut(time.Second) }, 2},
			{"one success is not a streak", func() error { return db.GrowJudgeConcurrency(ctx, id) }, 2},
			{"a streak as long as the limit adds one", func() error { return db.GrowJudgeConcurrency(ctx, id) }, 3},
			{"never below one", func() error {
				for range 5 {
					if err := cut(2 * time.Second); err != nil {
						return err
					}
				}
				return nil
			}, 1},
			{"never above the maximum", func() error {
				for range 200 {
					if err := db.GrowJudgeConcurrency(ctx, id); err != nil {
						return err
					}
				}
				return nil
			}, 8},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got := limit(); got != s.want {
				t.Errorf("%s: adaptive limit %d, want %d", s.name, got, s.want)
			}
		}
		// Slots follow the adaptive limit: with it cut to 1, a second
		// call waits even though 8 slots exist.
		for range 3 {
			if err := cut(100 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if got := limit(); got != 1 {
			t.Fatalf("limit %d after three cuts from 8, want 1", got)
		}
		if ok, err := db.AcquireJudgeSlot(ctx, id, "a", 30*time.Second); err != nil || !ok {
			t.Fatalf("first slot: %v %v", ok, err)
		}
		if ok, err := db.AcquireJudgeSlot(ctx, id, "b", 30*time.Second); err != nil || ok {
			t.Fatalf("second slot under a limit of 1: got %v (%v), want none", ok, err)
		}
	})
}

func TestJudgeBudgetBuckets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		// 120 requests a minute: the bucket holds one second's worth (2).
		// 6000 tokens a minute: 100 a second.
		id := newLimitedJudge(t, db, models.JudgeLimits{RequestsPerMinute: 120, TokensPerMinute: 6000})
		// The steps' times follow the database's clock, which runs on
		// between them too: by a few milliseconds, less than any step's
		// answer depends on (1/500 of a request, one token a millisecond).
		var at int64
		steps := []struct {
			name     string
			tokens   int
			at       int64 // ms after the buckets were filled
			wantWait bool
		}{
			{"first request", 40, 0, false},
			{"second request", 40, 0, false},
			{"third waits for a request", 10, 0, true},
			{"half a second later one request is back", 10, 500, false},
			{"the next request must wait again", 60, 500, true},
			{"a call bigger than the bucket waits for a full one", 500, 600, true},
			{"then goes", 500, 2000, false},
			{"and leaves the bucket in debt", 10, 2100, true},
		}
		for _, s := range steps {
			letPass(t, db, id, s.at-at)
			at = s.at
			wait, err := db.TakeJudgeBudget(ctx, id, s.tokens)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if (wait > 0) != s.wantWait {
				t.Errorf("%s: wait %s, want waiting %v", s.name, wait, s.wantWait)
			}
		}
	})
}

// TestJudgeSlotsAcrossHandles: four workers, each with its own database
// handle and eight calls at once, never hold more slots than the limit.
func TestJudgeSlotsAcrossHandles(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			ctx := context.Background()
			var handles []*models.DB
			for k := range 4 {
				db, err := models.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				if k == 0 {
					if err := db.MigrateSchema(ctx, nil); err != nil {
						t.Fatal(err)
					}
				}
				handles = append(handles, db)
			}
			const limit = 3
			id := newLimitedJudge(t, handles[0], models.JudgeLimits{MaxConcurrency: limit})
			var inFlight, peak, calls atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for w, db := range handles {
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := range 5 {
							holder := fmt.Sprintf("w%d/g%d/%d", w, g, k)
							for {
								ok, err := db.AcquireJudgeSlot(ctx, id, holder, time.Minute)
								if err != nil {
									errs <- err
									return
								}
								if ok {
									break
								}
								time.Sleep(2 * time.Millisecond)
							}
							n := inFlight.Add(1)
							for {
								p := peak.Load()
								if n <= p || peak.CompareAndSwap(p, n) {
									break
								}
							}
							time.Sleep(3 * time.Millisecond)
							calls.Add(1)
							inFlight.Add(-1)
							if err := db.ReleaseJudgeSlot(ctx, id, holder); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if calls.Load() != 4*8*5 {
				t.Fatalf("%d calls made, want %d", calls.Load(), 4*8*5)
			}
			if p := peak.Load(); p > limit || p < 2 {
				t.Errorf("peak in flight %d; want at most %d (and more than one, or nothing ran at once)", p, limit)
			}
		})
	}
}
