package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProgressAndLogsShareTheWriter: the runner logs from its own
// goroutines while waitFinished reports progress, both into the command's
// stderr. Into a non-terminal the log lines used to go straight to the
// writer, past the lock the progress lines take: a data race on any writer
// that is not a file (the race detector reported it in
// TestRunCommandHedgeSlowCalls, writing into a bytes.Buffer), and lines
// that could be cut into each other. Run it with -race to see the race.
func TestProgressAndLogsShareTheWriter(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		t.Run(fmt.Sprintf("terminal=%v", terminal), func(t *testing.T) {
			var buf bytes.Buffer
			p := &progress{w: &buf, terminal: terminal, now: time.Now, last: -1}
			log := slog.New(slog.NewTextHandler(p.logs(), nil))
			const loggers, lines, total = 4, 50, 100
			var wg sync.WaitGroup
			for g := range loggers {
				wg.Go(func() {
					for i := range lines {
						log.Info("judged", "logger", g, "line", i)
					}
				})
			}
			for done := range total + 1 {
				p.update(done, total)
			}
			wg.Wait()
			p.done()

			logLine := regexp.MustCompile(`^time=\S+ level=INFO msg=judged logger=\d+ line=\d+$`)
			progressLine := regexp.MustCompile(`^batches \d+/\d+ \(\d+%\)$`)
			logs := 0
			for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
				if terminal {
					// A log line replaces the bar: what follows its "\r\x1b[K" is the line.
					if i := strings.LastIndex(l, "\r\x1b[K"); i >= 0 && strings.Contains(l, "level=") {
						l = l[i+len("\r\x1b[K"):]
					}
				}
				switch {
				case logLine.MatchString(l):
					logs++
				case terminal && strings.HasPrefix(l, "\r"), !terminal && progressLine.MatchString(l):
				default:
					t.Errorf("line %q is neither a whole log line nor a progress line", l)
				}
			}
			if logs != loggers*lines {
				t.Errorf("%d whole log lines, want %d", logs, loggers*lines)
			}
		})
	}
}
