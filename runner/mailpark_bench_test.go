package runner

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkIdleCPUMailOnly is BenchmarkIdleCPU for a mail-only process
// (`serve --no-worker` with the SMTP settings, Config.WorkMail) with no
// mail to send, in cpu-ms/s: "awake" never parks (IdleAfter 0: River's
// client polls the mail queue for ever, as every such process did before
// it parked), "parked" parks after benchParkAfter and is measured parked.
// Both run in one process, one after the other, with the production
// PollInterval and lease (1 s, 10 s).
func BenchmarkIdleCPUMailOnly(b *testing.B) {
	for _, d := range dbtest.Dialects {
		for _, park := range []bool{false, true} {
			name := string(d) + "-mail-only-" + map[bool]string{false: "awake", true: "parked"}[park]
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
				b.ResetTimer()
				var total, wall time.Duration
				for range b.N {
					start, t0 := processCPU(b), time.Now()
					time.Sleep(idleWindow)
					total += processCPU(b) - start
					wall += time.Since(t0)
				}
				if park && !r.Parked() {
					b.Fatal("the mail-only process woke during the measurement")
				}
				b.ReportMetric(float64(total.Microseconds())/1000/wall.Seconds(), "cpu-ms/s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
