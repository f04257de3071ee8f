package handlers

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEstimateSaysWhatResendsMayAdd: re-sending slow calls is on by
// default, so the launch estimate of a run with it says the most paid
// calls it may add (one in 20 of the run's calls, plus one); a run with
// the box unticked, and one on the simulated judge (which costs nothing),
// say nothing of it.
func TestEstimateSaysWhatResendsMayAdd(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		f := judgeFormValues("Remote judge", "http://127.0.0.1:9/v1", "", "")
		if rec := env.postForm("/judges", f); rec.Code != http.StatusSeeOther {
			t.Fatalf("save judge: status %d: %s", rec.Code, rec.Body.String())
		}
		remote, ok := env.judgeNamed("Remote judge")
		if !ok {
			t.Fatal("judge not saved")
		}
		callsRe := regexp.MustCompile(`data-testid="estimate-calls">([0-9,]+)<`)
		resendsRe := regexp.MustCompile(`data-testid="estimate-resends">Re-sending slow calls may add up to ([0-9,]+) paid calls`)
		for _, tc := range []struct {
			name     string
			judge    int64
			unticked bool
			want     bool
		}{
			{"default, a remote judge", remote.ID, false, true},
			{"unticked, a remote judge", remote.ID, true, false},
			{"default, the simulated judge", d.judge.ID, false, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				form := d.launchForm("2", "10")
				form.Set("judge", strconv.FormatInt(tc.judge, 10))
				form.Set("project_id", strconv.FormatInt(env.project.ID, 10))
				if tc.unticked {
					form.Set("hedge_slow_calls_shown", "1")
				}
				rec := env.postForm("/runs/estimate", form)
				if rec.Code != http.StatusOK {
					t.Fatalf("estimate: status %d", rec.Code)
				}
				body := rec.Body.String()
				m := callsRe.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("no calls in the estimate:\n%s", body)
				}
				calls, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
				r := resendsRe.FindStringSubmatch(body)
				if !tc.want {
					if strings.Contains(body, "estimate-resends") {
						t.Errorf("the estimate speaks of re-sends:\n%s", body)
					}
					return
				}
				if r == nil {
					t.Fatalf("the estimate does not say what re-sends may add:\n%s", body)
				}
				if got, want := r[1], strconv.Itoa(calls/20+1); got != want {
					t.Errorf("re-sends may add %s calls for %d calls, want %s (one in 20, plus one)", got, calls, want)
				}
			})
		}
	})
}
