package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
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

// BenchmarkLaunchToFirstCallFromAnotherProcess: how long a run queued by
// one process waits for its first judge call in a worker process on the
// same SQLite file (a `serve --no-worker` beside a `batcheval worker`, or
// `resume --queue-only`), with the production poll (1 s). The worker is the
// test binary started again (startWorkerProcs); this process launches
// through an insert-only runner with its own pools and serves the judge
// (20 ms). "poll" is the worker without its watch of the wake file (the
// old behaviour: the run waits for River's next poll, or a parked worker's
// next look), "wake" with it; "awake" never parks, "parked" parks 300 ms
// after its last run and each launch comes 1.5 s after the previous run's
// job completed. Each launch is a one-round FED run (4 criteria, 52 calls,
// C = 16), timed from Launch to the judge's first request; the run's end
// and its job's completion are awaited untimed. Reported: first-call-ms.
func BenchmarkLaunchToFirstCallFromAnotherProcess(b *testing.B) {
	rub := fedRubric4()
	for _, parked := range []bool{false, true} {
		for _, wake := range []bool{false, true} {
			name := map[bool]string{false: "awake", true: "parked"}[parked] + "/" + map[bool]string{false: "poll", true: "wake"}[wake]
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
				l := newBenchLabWith(b, models.SQLite, rub, func(c *Config) { c.Work = false })
				ctx := context.Background()
				file, err := mainDatabaseFile(ctx, l.db.SQL)
				if err != nil {
					b.Fatal(err)
				}
				env := []string{}
				pause := 300 * time.Millisecond
				if parked {
					env = append(env, workerParkEnv+"=300ms")
					pause = 1500 * time.Millisecond
				}
				if !wake {
					env = append(env, workerNoWakeFileEnv+"=1")
				}
				startWorkerProcs(b, file, 1, 4, env...)
				var wait time.Duration
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					time.Sleep(pause)
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
					waitJobCompleted(b, l.db, *run.JobID, time.Minute)
					b.StartTimer()
				}
				b.ReportMetric(float64(wait.Microseconds())/1000/float64(b.N), "first-call-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// waitJobCompleted waits for River to complete the job (the run ended and
// its statistics stored), failing after within.
func waitJobCompleted(b *testing.B, db *models.DB, jobID int64, within time.Duration) {
	b.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		var state string
		if err := db.SQL.QueryRow("SELECT state FROM river_job WHERE id = ?", jobID).Scan(&state); err != nil {
			b.Fatal(err)
		}
		if state == "completed" {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("job %d still %s after %s", jobID, state, within)
		}
	}
}
