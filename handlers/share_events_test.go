package handlers

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSharedRunPageShowsRunEvents: a shared run's report said nothing of
// the lost leases and takeovers the run page's Run history card lists, so its
// reader could not tell why the run took as long as it did. The share page
// now lists them, oldest first, each with its time, in words that name no
// worker (its name holds the server's host name) and quote no error text
// (a lost lease's may hold the database's address).
func TestSharedRunPageShowsRunEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
		if body := env.getAs(link).Body.String(); strings.Contains(body, `data-testid="run-events"`) {
			t.Fatal("the share page lists worker events for a run that had none")
		}

		lostAt := time.Date(2026, 3, 4, 10, 0, 2, 0, time.UTC)
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt, Kind: models.RunEventLeaseLost, Worker: "build-host-7-4242-abc/3",
			Message: "Worker build-host-7-4242-abc lost its lease on the run at 2026-03-04 10:00:02 UTC: it could not renew it in time (the database did not answer: dial tcp 10.9.8.7:5432: <b>refused</b>)."}))
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt.Add(9 * time.Second), Kind: models.RunEventTakenOver, Worker: "other-host-1-77-def/1",
			Message: "Worker other-host-1-77-def took the run over at 2026-03-04 10:00:11 UTC from worker build-host-7-4242-abc."}))

		rec := env.getAs(link)
		if rec.Code != 200 {
			t.Fatalf("share page: %d", rec.Code)
		}
		body := rec.Body.String()
		if !strings.Contains(body, `data-testid="run-events"`) {
			t.Fatal("the share page does not list the run's events")
		}
		items := regexp.MustCompile(`<li data-testid="run-event" data-kind="([a-z_]+)"><time datetime="([^"]+)">([^<]+)</time>: ([^<]+)</li>`).FindAllStringSubmatch(body, -1)
		if len(items) != 2 {
			t.Fatalf("%d events listed, want 2: %q", len(items), items)
		}
		want := []struct{ kind, at, text string }{
			{models.RunEventLeaseLost, "2026-03-04 10:00:02 UTC", "A worker lost its hold (lease) on the run"},
			{models.RunEventTakenOver, "2026-03-04 10:00:11 UTC", "Another worker took the run over."},
		}
		for i, w := range want {
			if items[i][1] != w.kind || items[i][3] != w.at || !strings.HasPrefix(items[i][4], w.text) {
				t.Errorf("event %d: %q; want %s at %s: %q…", i+1, items[i][0], w.kind, w.at, w.text)
			}
		}
		for _, secret := range []string{"build-host", "other-host", "4242", "10.9.8.7", "refused"} {
			if strings.Contains(body, secret) {
				t.Errorf("the share page shows %q: worker names and error text stay in the workspace", secret)
			}
		}
	})
}

// TestStandaloneReportShowsRunEvents: the downloadable HTML report (from
// the run page and from a share link) said nothing of the lost leases,
// takeovers and requeues the share link's page lists, so a reader of the
// file could not tell why the run took as long as it did. The file now
// lists them, read-only, in the share link's words: no worker name (it
// holds the server's host name), no error text (it may hold the
// database's address). A run without events gets no such section.
func TestStandaloneReportShowsRunEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
		fromRunPage := "/runs/" + strconv.FormatInt(runID, 10) + "/report.html"
		if rec := env.get(fromRunPage); rec.Code != 200 || strings.Contains(rec.Body.String(), `data-testid="run-events"`) {
			t.Fatalf("report of a run without events: %d, lists events: %v", rec.Code, strings.Contains(rec.Body.String(), `data-testid="run-events"`))
		}

		lostAt := time.Date(2026, 3, 4, 10, 0, 2, 0, time.UTC)
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt, Kind: models.RunEventLeaseLost, Worker: "build-host-7-4242-abc/3",
			Message: "Worker build-host-7-4242-abc lost its lease on the run at 2026-03-04 10:00:02 UTC: it could not renew it in time (the database did not answer: dial tcp 10.9.8.7:5432: <b>refused</b>)."}))
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt.Add(9 * time.Second), Kind: models.RunEventTakenOver, Worker: "other-host-1-77-def/1",
			Message: "Worker other-host-1-77-def took the run over at 2026-03-04 10:00:11 UTC from worker build-host-7-4242-abc."}))
		must(t, env.db.AddRunEvent(ctx, models.RunEvent{RunID: runID, At: lostAt.Add(20 * time.Second), Kind: models.RunEventRequeued,
			Message: "The run's job was lost (discarded by worker old-host-9); it was queued again at 2026-03-04 10:00:22 UTC."}))

		for _, tc := range []struct {
			name, path string
			shared     bool
		}{
			{"downloaded from the run page", fromRunPage, false},
			{"downloaded from a share link", link + "/report.html", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.get(tc.path)
				if tc.shared {
					rec = env.getAs(tc.path)
				}
				if rec.Code != 200 {
					t.Fatalf("%s: %d", tc.path, rec.Code)
				}
				if cd := rec.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
					t.Fatalf("%s is not the downloadable file (Content-Disposition %q)", tc.path, cd)
				}
				body := rec.Body.String()
				items := regexp.MustCompile(`<li data-testid="run-event" data-kind="([a-z_]+)"><time datetime="([^"]+)">([^<]+)</time>: ([^<]+)</li>`).FindAllStringSubmatch(body, -1)
				// The share link's words for each kind (its page's test).
				want := []struct{ kind, at, text string }{
					{models.RunEventLeaseLost, "2026-03-04 10:00:02 UTC", "A worker lost its hold (lease) on the run"},
					{models.RunEventTakenOver, "2026-03-04 10:00:11 UTC", "Another worker took the run over."},
					{models.RunEventRequeued, "2026-03-04 10:00:22 UTC", "The run&#39;s place in the queue was lost, so it was queued again."},
				}
				if len(items) != len(want) {
					t.Fatalf("%d events listed, want %d: %q", len(items), len(want), items)
				}
				for i, w := range want {
					if items[i][1] != w.kind || items[i][3] != w.at || !strings.HasPrefix(items[i][4], w.text) {
						t.Errorf("event %d: %q; want %s at %s: %q…", i+1, items[i][0], w.kind, w.at, w.text)
					}
				}
				// The events come before the samples, as on the share page.
				if strings.Index(body, `data-testid="run-events"`) > strings.Index(body, `id="samples"`) {
					t.Error("the events are listed after the samples")
				}
				for _, secret := range []string{"build-host", "other-host", "old-host", "4242", "10.9.8.7", "refused"} {
					if strings.Contains(body, secret) {
						t.Errorf("the file shows %q: worker names and error text stay in the workspace", secret)
					}
				}
			})
		}
	})
}
