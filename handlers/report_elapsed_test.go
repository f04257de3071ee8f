package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReportsSayElapsedAndPausedTime: a run that went 15 minutes around a
// 14-hour pause says so in its downloaded report and on its share link
// ("Took 15m 00s (not counting 14h 00m paused or stopped)", as its page),
// and its JSON export's envelope carries elapsed_seconds and
// paused_seconds equal to the API's. Before, neither the export nor the
// reports had any elapsed or paused time.
func TestReportsSayElapsedAndPausedTime(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		start := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
		finished := start.Add(14*time.Hour + 15*time.Minute)
		if err := env.db.Gorm.Exec(`UPDATE runs SET started_at = ?, finished_at = ?, stopped_ms = ?, paused_at = NULL WHERE id = ?`,
			start, finished, (14 * time.Hour).Milliseconds(), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		const want = `<dt>Took</dt><dd data-testid="report-elapsed">15m 00s (not counting 14h 00m paused or stopped)</dd>`
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		for _, page := range []string{fmt.Sprintf("/runs/%d/report.html", run.ID), link, link + "/report.html"} {
			rec := env.getAs(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, want) {
				i := strings.Index(body, `<dt>Finished</dt>`)
				t.Errorf("%s does not say how long the run took (%s); its facts:\n%s", page, want, body[max(i, 0):min(max(i, 0)+400, len(body))])
			}
		}

		var api struct {
			Elapsed *float64 `json:"elapsed_seconds"`
			Paused  float64  `json:"paused_seconds"`
		}
		if err := json.Unmarshal(env.get(fmt.Sprintf("/api/v1/runs/%d", run.ID)).Body.Bytes(), &api); err != nil {
			t.Fatal(err)
		}
		var export struct {
			Envelope struct {
				Elapsed *float64 `json:"elapsed_seconds"`
				Paused  *float64 `json:"paused_seconds"`
			} `json:"envelope"`
		}
		rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
		if err := json.Unmarshal(rec.Body.Bytes(), &export); err != nil {
			t.Fatalf("export.json: %v\n%s", err, rec.Body)
		}
		e := export.Envelope
		if api.Elapsed == nil || *api.Elapsed != 900 || api.Paused != 14*3600 {
			t.Fatalf("API elapsed_seconds %v, paused_seconds %v; want 900 and %d", api.Elapsed, api.Paused, 14*3600)
		}
		if e.Elapsed == nil || e.Paused == nil || *e.Elapsed != *api.Elapsed || *e.Paused != api.Paused {
			t.Errorf("export envelope elapsed_seconds %v, paused_seconds %v; want the API's %v and %v", e.Elapsed, e.Paused, *api.Elapsed, api.Paused)
		}
	})
}
