package web

import "testing"

// TestReviewRunLabel: the queue's run choice names a run by its id and
// name, says it is the simulated judge's once, also for a run whose name
// already says so (the demo's), and says how a run stands that did not go
// through all its calls. Two runs of one name were two identical choices.
func TestReviewRunLabel(t *testing.T) {
	tests := []struct {
		id     int64
		name   string
		sim    bool
		status string
		want   string
	}{
		{1, "Demo run (simulated judge)", true, "", "run 1 · Demo run (simulated judge)"},
		{2, "Nightly (Simulated Judge)", true, "", "run 2 · Nightly (Simulated Judge)"},
		{3, "Pilot", true, "", "run 3 · Pilot (simulated judge)"},
		{4, "Pilot", false, "", "run 4 · Pilot"},
		{5, "simulated judge vs gpt-4o", false, "", "run 5 · simulated judge vs gpt-4o"},
		{6, "Pilot", true, "paused", "run 6 · Pilot (simulated judge) · paused"},
		{7, "Pilot", false, "running", "run 7 · Pilot · running"},
	}
	for _, tt := range tests {
		if got := reviewRunLabel(ReviewRunOption{ID: tt.id, Name: tt.name, Simulated: tt.sim, Status: tt.status}); got != tt.want {
			t.Errorf("reviewRunLabel(%d, %q, simulated %v, %q) = %q, want %q", tt.id, tt.name, tt.sim, tt.status, got, tt.want)
		}
	}
}
