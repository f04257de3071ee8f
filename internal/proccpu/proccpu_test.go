package proccpu

import (
	"runtime"
	"testing"
	"time"
)

// TestReadCountsWorkAndSleeps: spinning adds CPU time, and sleeping adds a
// voluntary context switch (where the system reports usage at all).
func TestReadCountsWorkAndSleeps(t *testing.T) {
	before, ok := Read()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no usage read on linux")
		}
		t.Skip("usage not reported on", runtime.GOOS)
	}
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	for range 3 {
		time.Sleep(2 * time.Millisecond)
	}
	after, _ := Read()
	used := after.Sub(before)
	if used.CPU < 10*time.Millisecond {
		t.Errorf("30 ms of spinning counted %v of CPU (x=%d)", used.CPU, x)
	}
	if used.Switches < 1 {
		t.Errorf("three sleeps counted %d context switches", used.Switches)
	}
}
