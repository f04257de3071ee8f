package main

import (
	"fmt"
	"io"
	"strings"
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
	last     int  // batches done at the last report; -1 before the first
	drawn    bool // a bar is on the terminal's current line
}

// newProgress reports to w, drawing a bar when w is a terminal.
func newProgress(w io.Writer) *progress {
	return &progress{w: w, terminal: isTerminal(w), start: time.Now(), now: time.Now, last: -1}
}

// isTerminal tells whether w is a terminal (not a file, pipe or buffer).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// update reports done of total batches when the count changed.
func (p *progress) update(done, total int) {
	if total <= 0 || done == p.last {
		return
	}
	p.last = done
	if !p.terminal {
		fmt.Fprintf(p.w, "batches %d/%d (%d%%)\n", done, total, percent(done, total))
		return
	}
	filled := barWidth * done / total
	bar := strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
	line := fmt.Sprintf("\r%s %d/%d batches %3d%%", bar, done, total, percent(done, total))
	if left, ok := p.remaining(done, total); ok {
		line += " · about " + left + " left"
	}
	// Clear what a longer previous line left at the end.
	fmt.Fprint(p.w, line+"\x1b[K")
	p.drawn = true
}

// done ends the bar's line, so what follows starts on a fresh one.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// remaining estimates the time left from the pace so far.
func (p *progress) remaining(done, total int) (string, bool) {
	elapsed := p.now().Sub(p.start)
	if done <= 0 || done >= total || elapsed <= 0 {
		return "", false
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
	return left.Round(time.Second).String(), true
}

func percent(done, total int) int { return 100 * done / total }
