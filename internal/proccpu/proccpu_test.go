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
	// Spin until the process has used 10 ms more CPU. A wall-clock spin
	// of a fixed length was flaky: on a loaded 2-core machine 30 ms of it
	// got 9.7 ms of CPU. A Read that did not count work never gets there;
	// one in the wrong unit gets there at once, faster than the clock.
	start := time.Now()
	x := 0
	for {
		x++
		if x%1024 != 0 {
			continue
		}
		now, _ := Read()
		if now.Sub(before).CPU >= 10*time.Millisecond {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("10 s of spinning counted %v of CPU (x=%d)", now.Sub(before).CPU, x)
		}
	}
	wall := time.Since(start)
	for range 3 {
		time.Sleep(2 * time.Millisecond)
	}
	after, _ := Read()
	used := after.Sub(before)
	// The spin's wall time on every core, plus room for the sleeps.
	if limit := wall*time.Duration(runtime.NumCPU()) + 30*time.Millisecond; used.CPU > limit {
		t.Errorf("%v of CPU counted in %v of wall time on %d cores", used.CPU, wall, runtime.NumCPU())
	}
	if used.Switches < 1 {
		t.Errorf("three sleeps counted %d context switches", used.Switches)
	}
}
