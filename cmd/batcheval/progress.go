package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// barWidth is the progress bar's length in characters: with the counts
// and the time left it stays within an 80-column terminal.
const barWidth = 30

// progress reports a run's batches on the command line: on a terminal, a
// bar redrawn in place; otherwise (a file, a pipe, a CI log) one plain line
// each time the count changes, so logs read line by line.
type progress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	now      func() time.Time
	mu       sync.Mutex // the runner logs from its own goroutines
	last     int        // batches done at the last report; -1 before the first
	drawn    string     // the bar on the terminal's current line; "" when none
	unit     string     // what is counted, in the method's words ("batches", "samples")
}

// newProgress reports to w, drawing a bar when w is a terminal.
func newProgress(w io.Writer) *progress {
	return &progress{w: w, terminal: isTerminal(w), now: time.Now, last: -1, unit: "batches"}
}

// isTerminal tells whether w is a terminal (not a file, pipe or buffer).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// update reports done of total batches when the count changed.
func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 || done == p.last {
		return
	}
	if p.start.IsZero() {
		p.start = p.now() // the pace counts from the first report, not from start-up
	}
	p.last = done
	unit := p.unit
	if unit == "" {
		unit = "batches"
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "%s %d/%d (%d%%)\n", unit, done, total, percent(done, total))
		return
	}
	filled := barWidth * done / total
	bar := strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
	line := fmt.Sprintf("%s %d/%d %s %3d%%", bar, done, total, unit, percent(done, total))
	if left, ok := p.remaining(done, total); ok {
		line += " · about " + left + " left"
	}
	// Clear what a longer previous line left at the end.
	p.drawn = "\r" + line + clearLine
	fmt.Fprint(p.w, p.drawn)
}

// clearLine erases from the cursor to the end of the terminal's line.
const clearLine = "\x1b[K"

// done ends the bar's line, so what follows starts on a fresh one.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn != "" {
		fmt.Fprintln(p.w)
		p.drawn = ""
	}
}

// logs is where log lines go while the bar is shown: on a terminal each
// line replaces the bar, which is drawn again below it, so neither is cut.
// Elsewhere they go straight on, but under the same lock as the progress
// lines: the runner logs from its own goroutines into the same writer.
func (p *progress) logs() io.Writer {
	return logWriter{p}
}

type logWriter struct{ p *progress }

func (l logWriter) Write(b []byte) (int, error) {
	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn != "" {
		fmt.Fprint(p.w, "\r"+clearLine)
	}
	n, err := p.w.Write(b)
	if p.drawn != "" {
		fmt.Fprint(p.w, p.drawn)
	}
	return n, err
}

// remaining estimates the time left from the pace so far.
func (p *progress) remaining(done, total int) (string, bool) {
	elapsed := p.now().Sub(p.start)
	if done <= 0 || done >= total || elapsed <= 0 {
		return "", false
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
	if left < time.Second {
		return "a second", true
	}
	return left.Round(time.Second).String(), true
}

func percent(done, total int) int { return 100 * done / total }
