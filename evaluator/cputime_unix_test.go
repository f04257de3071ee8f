//go:build unix

package evaluator

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used: a
// benchmark figure that, unlike wall time, does not grow when other work
// on a loaded machine takes the CPU away.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
