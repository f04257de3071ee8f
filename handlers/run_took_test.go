package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDurationTextUnderASecond: a duration under a second read "0s", so
// the demo run's page said "Took 0s". Every worded duration says "under
// 1s" instead; the others are as before.
func TestDurationTextUnderASecond(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "under 1s"},
		{300 * time.Millisecond, "under 1s"},
		{999 * time.Millisecond, "under 1s"},
		{-time.Second, "under 1s"},
		{time.Second, "1s"},
		{1400 * time.Millisecond, "1s"},
		{45 * time.Second, "45s"},
		{185 * time.Second, "3m 05s"},
		{2*time.Hour + 7*time.Minute, "2h 07m"},
	} {
		if got := durationText(tc.d); got != tc.want {
			t.Errorf("durationText(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestRunUnderASecondSaysSo: a run that took 0.3 s says "Took under 1s"
// on its page, its report and its share link, not "Took 0s".
func TestRunUnderASecondSaysSo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		start := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
		if err := env.db.Gorm.Exec(`UPDATE runs SET started_at = ?, finished_at = ?, stopped_ms = 0, paused_at = NULL WHERE id = ?`,
			start, start.Add(300*time.Millisecond), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		for _, tc := range []struct{ page, want string }{
			{fmt.Sprintf("/runs/%d", run.ID), `<dd data-testid="run-took">under 1s</dd>`},
			{fmt.Sprintf("/runs/%d/report.html", run.ID), `<dt>Took</dt><dd data-testid="report-elapsed">under 1s</dd>`},
			{link, `<dt>Took</dt><dd data-testid="report-elapsed">under 1s</dd>`},
		} {
			rec := env.getAs(tc.page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", tc.page, rec.Code)
			}
			body := rec.Body.String()
			if !strings.Contains(body, tc.want) {
				t.Errorf("%s lacks %s", tc.page, tc.want)
			}
			if strings.Contains(body, ">0s<") {
				t.Errorf("%s says the run took 0s", tc.page)
			}
		}
	})
}
