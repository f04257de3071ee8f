package web

import "testing"

// TestReviewRunLabel: the queue's run choice says a run is the simulated
// judge's once, also for a run whose name already says so (the demo's).
func TestReviewRunLabel(t *testing.T) {
	tests := []struct {
		name string
		sim  bool
		want string
	}{
		{"Demo run (simulated judge)", true, "Demo run (simulated judge)"},
		{"Nightly (Simulated Judge)", true, "Nightly (Simulated Judge)"},
		{"Pilot", true, "Pilot (simulated judge)"},
		{"Pilot", false, "Pilot"},
		{"simulated judge vs gpt-4o", false, "simulated judge vs gpt-4o"},
	}
	for _, tt := range tests {
		if got := reviewRunLabel(ReviewRunOption{Name: tt.name, Simulated: tt.sim}); got != tt.want {
			t.Errorf("reviewRunLabel(%q, simulated %v) = %q, want %q", tt.name, tt.sim, got, tt.want)
		}
	}
}
