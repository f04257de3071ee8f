package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestProgressStreamEndsWhenAccessEnds: the progress stream of a run
// still going ends within a few seconds of its reader losing access to the
// workspace (removed, or signed out everywhere by a password change),
// while a member's stream goes on. Regression: it went on sending the
// run's progress (and, while the run waited, the judge's error) to a
// removed member until the run ended, hours later for a large run.
func TestProgressStreamEndsWhenAccessEnds(t *testing.T) {
	shortStreamTimings(t)
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("streamed", 10)
		run := env.storedRun(d, "still going", d.human, nil)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
		env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		for _, tc := range []struct {
			name string
			end  func(u models.User) // nil: access goes on
		}{
			{"member stays", nil},
			{"member removed", func(u models.User) {
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
			}},
			{"sessions signed out", func(u models.User) {
				if _, err := env.db.EndOtherSessions(ctx, u.ID); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				u := env.createUser(env.ws.ID, strings.ReplaceAll(tc.name, " ", "-")+"@a.test", models.RoleViewer)
				req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/events", run.ID), nil)
				req.AddCookie(env.sessionCookie(u))
				rctx, cancel := context.WithTimeout(ctx, 3*accessRecheck+2*time.Second)
				defer cancel()
				rec := httptest.NewRecorder()
				done := make(chan struct{})
				go func() {
					env.e.ServeHTTP(rec, req.WithContext(rctx))
					close(done)
				}()
				time.Sleep(progressPoll + 200*time.Millisecond)
				if tc.end != nil {
					tc.end(u)
				}
				select {
				case <-done:
					if tc.end == nil {
						t.Errorf("the stream of a member ended early")
					}
				case <-time.After(accessRecheck + 2*progressPoll + time.Second):
					if tc.end != nil {
						t.Errorf("the stream still runs %s after its reader lost access", accessRecheck+2*progressPoll+time.Second)
					}
					cancel()
					<-done
				}
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "event: progress") {
					t.Errorf("the stream opened with %d %.200q, want 200 and a first progress event", rec.Code, rec.Body.String())
				}
				// The stream says why it ends, for the page to show: it
				// ended silently, and the page went on showing the last
				// progress as if the run had stalled there.
				ended := strings.HasSuffix(rec.Body.String(), "event: ended\ndata: "+streamEndedNoAccess+"\n\n")
				if tc.end != nil && !ended {
					t.Errorf("the stream ended without an ended event: %.300q", rec.Body.String()[max(0, rec.Body.Len()-300):])
				}
				if tc.end == nil && strings.Contains(rec.Body.String(), "event: ended") {
					t.Errorf("a member's stream says it ended")
				}
				if !json.Valid([]byte(streamEndedNoAccess)) {
					t.Errorf("the ended event's data is not JSON: %s", streamEndedNoAccess)
				}
			})
		}
	})
}

// shortStreamTimings runs the progress stream on a shorter clock for the
// rest of the test (it waits on the poll and the access recheck, which
// add up to seconds a case at the product's timings) and restores the
// product's timings after. Not for parallel tests: the timings are the
// package's.
func shortStreamTimings(t *testing.T) {
	t.Helper()
	poll, recheck := progressPoll, accessRecheck
	progressPoll, accessRecheck = 100*time.Millisecond, 400*time.Millisecond
	t.Cleanup(func() { progressPoll, accessRecheck = poll, recheck })
}
