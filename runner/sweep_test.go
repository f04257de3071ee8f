package runner

import (
	"testing"
	"time"
)

// TestSweepIntervals: the sweep looks every 2 s (or half a short lease)
// while runs are running, and every half lease while none is, never less
// often than while busy; with the default lease a crashed worker's run is
// still found within 2 s of its lease lapsing (see sweepLoop).
func TestSweepIntervals(t *testing.T) {
	cases := []struct {
		lease, busy, idle time.Duration
	}{
		{DefaultLeaseTTL, 2 * time.Second, 5 * time.Second},
		{2 * time.Second, time.Second, time.Second},
		{30 * time.Second, 2 * time.Second, 15 * time.Second},
		{time.Second, 500 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := sweepInterval(tc.lease); got != tc.busy {
			t.Errorf("lease %s: busy sweep every %s, want %s", tc.lease, got, tc.busy)
		}
		got := idleSweepInterval(tc.lease)
		if got != tc.idle {
			t.Errorf("lease %s: idle sweep every %s, want %s", tc.lease, got, tc.idle)
		}
		// A lease claimed just after an idle sweep outlasts the wait for
		// the next one: its lapse is then caught by busy sweeps.
		if got >= tc.lease {
			t.Errorf("lease %s: idle sweep every %s would miss a lease's lapse", tc.lease, got)
		}
	}
}
