package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// BenchmarkLaunchToFirstCall: how long a run launched through an awake
// SQLite worker waits for its first judge call, with the production poll
// (1 s) and without parking. "poll" is the runner without its wake of
// River's producer (fetchNow; the old behaviour: the run waits for the
// next poll), "wake" with it. Each iteration launches a one-round FED run
// (4 criteria, 52 calls, 20 ms judge served in this process, C = 16), times
// Launch to the judge's first request, and waits for the run's end and
// its statistics untimed, then 300 ms more, so each launch falls somewhere
// else in the poll's cycle. Reported: first-call-ms per launch.
func BenchmarkLaunchToFirstCall(b *testing.B) {
	rub := fedRubric4()
	for _, wake := range []bool{false, true} {
		name := "poll"
		if wake {
			name = "wake"
		}
		b.Run(name, func(b *testing.B) {
			calls := make(chan time.Time, 256)
			inner := simjudge.NewHandler(simjudge.Options{Seed: 1, Latency: 20 * time.Millisecond})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case calls <- time.Now():
				default:
				}
				inner.ServeHTTP(w, r)
			}))
			b.Cleanup(srv.Close)
			l := newBenchLabWith(b, benchDialect(), rub, nil, func(r *Runner) {
				if !wake {
					r.fetch.wake = nil
				}
			})
			ctx := context.Background()
			var wait time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				time.Sleep(300 * time.Millisecond)
				for len(calls) > 0 {
					<-calls
				}
				run := l.fedRun(rub, srv.URL+"/v1", 16, 1)
				b.StartTimer()
				t0 := time.Now()
				if err := l.r.Launch(ctx, &run); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-calls:
					wait += at.Sub(t0)
				case <-time.After(30 * time.Second):
					b.Fatal("no judge call 30 s after the launch")
				}
				b.StopTimer()
				select {
				case <-l.finished:
				case <-time.After(time.Minute):
					b.Fatal("run not ended after a minute")
				}
				l.statsStored(b, run)
				b.StartTimer()
			}
			b.ReportMetric(float64(wait.Microseconds())/1000/float64(b.N), "first-call-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
