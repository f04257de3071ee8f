package runner

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// processCPU is the CPU time (user + system) this process has used.
func processCPU(tb testing.TB) time.Duration { return proccpu.Now(tb).CPU }

// idleWindow is how long the idle benchmark watches a worker with nothing
// to do.
const idleWindow = 4 * time.Second

// BenchmarkIdleCPU: the CPU a started worker (job polling, lease sweeps)
// uses while no run is queued, in milliseconds of CPU per second, on each
// database. Target: at most 2 ms/s. The -parked cases start the worker with
// IdleAfter (parkAfter) and measure once it has parked: River's client is
// stopped, and what is left is the lease sweep, the parked look for due
// jobs (every 5 s on SQLite with the wake file watched, as on PostgreSQL;
// every PollInterval, the production default 1 s, where it is not), and a
// LISTENing connection on PostgreSQL.
//
// sqlite-parked-own-timer is sqlite-parked with the parked look on a
// timer of its own (5 s, beside the sweep's 5 s), as before it came with
// the sweep's wake-up (parkedLooksWithSweep): the baseline of that change.
//
// sqlite-parked-unwatched is sqlite-parked without the wake file (as where
// it cannot be watched): the parked look every second, the baseline of the
// look every 5 s that the watch allows.
func BenchmarkIdleCPU(b *testing.B) {
	for _, d := range dbtest.Dialects {
		for _, c := range []struct{ park, unwatched, ownTimer bool }{{false, false, false}, {true, false, false}, {true, false, true}, {true, true, false}} {
			if (c.unwatched || c.ownTimer) && d != models.SQLite {
				continue
			}
			name := string(d)
			cfg := Config{Work: true}
			if c.park {
				name += "-parked"
				cfg.IdleAfter = benchParkAfter
			}
			if c.unwatched {
				name += "-unwatched"
			}
			if c.ownTimer {
				name += "-own-timer"
			}
			park := c.park
			b.Run(name, func(b *testing.B) {
				db := dbtest.Open(b, d, migrateJobs)
				cfg.DB, cfg.Log = db, testLog()
				r, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if c.unwatched {
					r.wake.path = ""
				}
				r.park.ownTimer = c.ownTimer
				if err := r.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				defer func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = r.Stop(ctx)
				}()
				time.Sleep(time.Second) // start-up (migrations checked, leader elected)
				if park {
					for deadline := time.Now().Add(10 * time.Second); !r.Parked(); time.Sleep(10 * time.Millisecond) {
						if time.Now().After(deadline) {
							b.Fatal("the worker did not park")
						}
					}
				}
				b.ResetTimer()
				var total time.Duration
				var wall time.Duration
				for range b.N {
					start, t0 := processCPU(b), time.Now()
					time.Sleep(idleWindow)
					total += processCPU(b) - start
					wall += time.Since(t0)
				}
				if park && !r.Parked() {
					b.Fatal("the worker woke during the measurement")
				}
				b.ReportMetric(float64(total.Microseconds())/1000/wall.Seconds(), "cpu-ms/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// benchParkAfter is the parked case's IdleAfter: short, so the
// benchmark does not wait long for the worker to park.
const benchParkAfter = 500 * time.Millisecond

// BenchmarkTickerFloor is what one goroutine woken every 50 ms costs on
// this machine, the floor under any started River client (its job
// completer ticks every 50 ms, hard-coded), for reading BenchmarkIdleCPU.
func BenchmarkTickerFloor(b *testing.B) {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	b.ResetTimer()
	var total, wall time.Duration
	for range b.N {
		start, t0 := processCPU(b), time.Now()
		time.Sleep(idleWindow)
		total += processCPU(b) - start
		wall += time.Since(t0)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/wall.Seconds(), "cpu-ms/s")
	b.ReportMetric(0, "ns/op")
}
