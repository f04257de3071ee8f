package runner

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWakeFromParked: what parking costs a run launched through the
// same process, the price of a shorter --park-after. Each iteration
// launches a one-round FED run (4 criteria, 52 calls, 20 ms judge, C = 16)
// and times its pickup: from Launch to the run's start as stored (status
// no longer queued), and the process's CPU over that time. "awake" never
// parks; "parked" parks after 300 ms and is parked at each launch, so its
// pickup includes starting River's client again. Reported: pickup-ms and
// pickup-cpu-ms, per launch.
func BenchmarkWakeFromParked(b *testing.B) {
	rub := fedRubric4()
	for _, park := range []bool{false, true} {
		name := "awake"
		if park {
			name = "parked"
		}
		b.Run(name, func(b *testing.B) {
			url := startFakeJudge(b, 20*time.Millisecond, 0)
			l := newBenchLabWith(b, benchDialect(), rub, func(c *Config) {
				if park {
					c.IdleAfter = 300 * time.Millisecond
				}
			})
			ctx := context.Background()
			var pickup, cpu time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if park {
					for deadline := time.Now().Add(10 * time.Second); !l.r.Parked(); time.Sleep(5 * time.Millisecond) {
						if time.Now().After(deadline) {
							b.Fatal("the worker did not park")
						}
					}
				} else {
					time.Sleep(300 * time.Millisecond)
				}
				b.StartTimer()
				run := l.fedRun(rub, url, 16, 1)
				c0, t0 := processCPU(b), time.Now()
				if err := l.r.Launch(ctx, &run); err != nil {
					b.Fatal(err)
				}
				for {
					got, err := l.db.GetRun(ctx, run.ID)
					if err != nil {
						b.Fatal(err)
					}
					if got.StartedAt != nil {
						break
					}
					if time.Since(t0) > 30*time.Second {
						b.Fatal("run not started after 30 s")
					}
					time.Sleep(time.Millisecond)
				}
				pickup += time.Since(t0)
				cpu += processCPU(b) - c0
				b.StopTimer()
				select {
				case <-l.finished:
				case <-time.After(time.Minute):
					b.Fatal("run not ended after a minute")
				}
				// Its statistics are computed after its end: not counted.
				l.statsStored(b, run)
				b.StartTimer()
			}
			b.ReportMetric(float64(pickup.Microseconds())/1000/float64(b.N), "pickup-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "pickup-cpu-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
