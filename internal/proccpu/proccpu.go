// Package proccpu reads what the running process has cost the machine so
// far, for benchmarks: its CPU time, which unlike wall time does not grow
// when other work on a shared machine takes the CPU away, and its context
// switches, each a thread put to sleep and woken again (on a virtual
// machine a wake-up can cost more CPU than the work it is for).
package proccpu

import (
	"testing"
	"time"
)

// Usage is the process's CPU time (user and system) and context switches
// (voluntary and not) since it started, over all its threads.
type Usage struct {
	CPU      time.Duration
	Switches int64
}

// Sub is what was used between two readings.
func (u Usage) Sub(before Usage) Usage {
	return Usage{CPU: u.CPU - before.CPU, Switches: u.Switches - before.Switches}
}

// Now is Read for a test or benchmark, which it skips where the system
// reports no usage.
func Now(tb testing.TB) Usage {
	tb.Helper()
	u, ok := Read()
	if !ok {
		tb.Skip("this system reports no process CPU time")
	}
	return u
}
