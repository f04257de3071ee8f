//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Read returns the process's usage so far; ok is false where the system
// does not report it.
func Read() (u Usage, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, false
	}
	return Usage{
		CPU:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		Switches: int64(ru.Nvcsw + ru.Nivcsw),
	}, true
}
