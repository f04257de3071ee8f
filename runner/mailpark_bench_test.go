package runner

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkIdleCPUMailOnly is BenchmarkIdleCPU for a mail-only process
// (`serve --no-worker` with the SMTP settings, Config.WorkMail) with no
// mail to send, in cpu-ms/s: "awake" never parks (IdleAfter 0: River's
// client polls the mail queue for ever, as every such process did before
// it parked), "parked" parks after benchParkAfter and is measured parked.
// "parked-runs-queued" (SQLite) is "parked" while another process on the
// database queues a run every benchRunEvery: that process's wake after
// each commit (the runs' wake file, as Launch writes it) is all the
// mail-only process sees of a run, so it is what the case writes. With
// one wake file for every queue it woke the mail-only process each time
// (River's client started, fetched nothing, and stayed up until idle
// again), and with runs queued more often than IdleAfter it never parked;
// with mail's own wake file it stays parked. All run in one process, one
// after the other, with the production PollInterval and lease (1 s, 10 s).
func BenchmarkIdleCPUMailOnly(b *testing.B) {
	for _, d := range dbtest.Dialects {
		for _, c := range []struct{ park, runs bool }{{false, false}, {true, false}, {true, true}} {
			if c.runs && d != models.SQLite {
				continue // PostgreSQL's insert notifications name the queue
			}
			name := string(d) + "-mail-only-" + map[bool]string{false: "awake", true: "parked"}[c.park]
			if c.runs {
				name += "-runs-queued"
			}
			park, runs := c.park, c.runs
			b.Run(name, func(b *testing.B) {
				db := dbtest.Open(b, d, migrateJobs)
				cfg := Config{DB: db, Log: testLog(), WorkMail: true}
				if park {
					cfg.IdleAfter = benchParkAfter
				}
				r, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.SetMail(mailTo(b, mailtest.Start(b))); err != nil {
					b.Fatal(err)
				}
				if err := r.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				defer func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = r.Stop(ctx)
				}()
				time.Sleep(time.Second) // start-up
				for deadline := time.Now().Add(10 * time.Second); park && !r.Parked(); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						b.Fatal("the mail-only process did not park")
					}
				}
				if runs {
					// The other process: a runner that queues and works
					// nothing, as `serve --no-worker` without SMTP is.
					other, err := New(Config{DB: db, Log: testLog()})
					if err != nil {
						b.Fatal(err)
					}
					stop := make(chan struct{})
					done := make(chan struct{})
					go func() {
						defer close(done)
						t := time.NewTicker(benchRunEvery)
						defer t.Stop()
						for {
							select {
							case <-stop:
								return
							case <-t.C:
								other.wakeOthers()
							}
						}
					}()
					defer func() { close(stop); <-done }()
				}
				b.ResetTimer()
				var total, wall time.Duration
				for range b.N {
					start, t0 := processCPU(b), time.Now()
					time.Sleep(idleWindow)
					total += processCPU(b) - start
					wall += time.Since(t0)
				}
				if park && !runs && !r.Parked() {
					b.Fatal("the mail-only process woke during the measurement")
				}
				b.ReportMetric(float64(total.Microseconds())/1000/wall.Seconds(), "cpu-ms/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// benchRunEvery is how often the other process queues a run in the
// -runs-queued case: more often than benchParkAfter, as runs queued more
// often than the production IdleAfter (a minute) are on a busy server.
const benchRunEvery = 250 * time.Millisecond
