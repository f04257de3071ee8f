package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// TestProgressStreamEndsWhenAccessEnds: the progress stream of a run
// still going ends within a few seconds of its reader losing access to the
// workspace (removed, or signed out everywhere by a password change),
// while a member's stream goes on; and so does the stream of a session
// signed out (Sign out, pressed in another tab). Regression: it went on sending the
// run's progress (and, while the run waited, the judge's error) to a
// removed member until the run ended, hours later for a large run.
func TestProgressStreamEndsWhenAccessEnds(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		shortStreamTimings(env)
		ctx := context.Background()
		d := env.ratedDataset("streamed", 10)
		run := env.storedRun(d, "still going", d.human, nil)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
		env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		for _, tc := range []struct {
			name string
			// end ends the reader's access (nil: access goes on); session
			// is the cookie the stream was opened with.
			end func(u models.User, session *http.Cookie)
		}{
			{"member stays", nil},
			{"member removed", func(u models.User, _ *http.Cookie) {
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
			}},
			{"sessions signed out", func(u models.User, _ *http.Cookie) {
				if _, err := env.db.EndOtherSessions(ctx, u.ID); err != nil {
					t.Fatal(err)
				}
			}},
			// Sign out pressed in another tab of the same browser ends
			// that very session (it does not move the account's epoch):
			// the stream opened with it went on.
			{"this session signed out", func(u models.User, session *http.Cookie) {
				if rec := env.send(http.MethodPost, "/logout", nil, "", session); rec.Code != http.StatusSeeOther {
					t.Fatalf("sign out: %d %.200q", rec.Code, rec.Body.String())
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				u := env.createUser(env.ws.ID, strings.ReplaceAll(tc.name, " ", "-")+"@a.test", models.RoleViewer)
				req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/events", run.ID), nil)
				session := env.sessionCookie(u)
				req.AddCookie(session)
				rctx, cancel := context.WithCancel(ctx)
				defer cancel()
				rec := newStreamRecorder()
				done := make(chan struct{})
				go func() {
					env.e.ServeHTTP(rec, req.WithContext(rctx))
					close(done)
				}()
				// Access ends once the stream is open and has sent its
				// first event (it used to be a 300 ms sleep: under load
				// the session was sometimes gone before it was read).
				if !rec.waitFor("event: progress", done) {
					cancel()
					<-done
					t.Fatalf("the stream opened with %d %.200q, want 200 and a first progress event", rec.Code(), rec.String())
				}
				if tc.end != nil {
					tc.end(u, session)
					// Ends at the next recheck; bounded by streamWait, not
					// by the recheck's timing, which a loaded machine
					// stretches (the run itself never ends here).
					if !waitDone(done, cancel) {
						t.Errorf("the stream still runs %v after its reader lost access", streamWait)
					}
				} else {
					// A member's stream goes on past a recheck or two.
					select {
					case <-done:
						t.Errorf("the stream of a member ended early: %.300q", rec.String())
					case <-time.After(accessRecheck + 2*progressPoll + time.Second):
						cancel()
						<-done
					}
				}
				body := rec.String()
				if rec.Code() != http.StatusOK || !strings.Contains(body, "event: progress") {
					t.Errorf("the stream opened with %d %.200q, want 200 and a first progress event", rec.Code(), body)
				}
				// The stream says why it ends, for the page to show: it
				// ended silently, and the page went on showing the last
				// progress as if the run had stalled there.
				ended := strings.HasSuffix(body, "event: ended\ndata: "+streamEndedNoAccess+"\n\n")
				if tc.end != nil && !ended {
					t.Errorf("the stream ended without an ended event: %.300q", body[max(0, len(body)-300):])
				}
				if tc.end == nil && strings.Contains(body, "event: ended") {
					t.Errorf("a member's stream says it ended")
				}
				if !json.Valid([]byte(streamEndedNoAccess)) {
					t.Errorf("the ended event's data is not JSON: %s", streamEndedNoAccess)
				}
			})
		}
	})
}

// progressPoll and accessRecheck are the progress stream's timings in
// the tests that wait on them (see shortStreamTimings).
const progressPoll, accessRecheck = 100 * time.Millisecond, 400 * time.Millisecond

// shortStreamTimings runs env's progress stream on a shorter clock (a test
// waits on the poll and the access recheck, which add up to seconds a case
// at the product's timings).
func shortStreamTimings(env *testEnv) {
	env.h.progressPoll, env.h.accessRecheck = progressPoll, accessRecheck
}

// TestAccessRecheckErrorIsNoRefusal: a recheck of a stream's access that
// gets no answer from the database (busy under load, restarting) does not
// end a member's stream as if they had lost access; the stream asks again
// at its next poll, and still ends once the member is really removed.
// Regression: any error of the recheck's reads ended the stream with "you
// no longer have access" (a flaky member_stays case of
// TestProgressStreamEndsWhenAccessEnds under load was this).
func TestAccessRecheckErrorIsNoRefusal(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		shortStreamTimings(env)
		ctx := context.Background()
		d := env.ratedDataset("streamed", 10)
		run := env.storedRun(d, "still going", d.human, nil)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
		env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		u := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)

		// Every read of the memberships table fails while failing is set,
		// as a database that does not answer would; refused counts them.
		var failing atomic.Bool
		var refused atomic.Int64
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			name := "test:memberships-unanswered"
			must(t, g.Callback().Query().Before("gorm:query").Register(name, func(tx *gorm.DB) {
				if failing.Load() && tx.Statement.Table == "memberships" {
					refused.Add(1)
					tx.AddError(errors.New("database is locked"))
				}
			}))
			t.Cleanup(func() { g.Callback().Query().Remove(name) })
		}

		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/events", run.ID), nil)
		req.AddCookie(env.sessionCookie(u))
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rec := newStreamRecorder()
		done := make(chan struct{})
		go func() {
			env.e.ServeHTTP(rec, req.WithContext(rctx))
			close(done)
		}()
		if !rec.waitFor("event: progress", done) { // the first event is out
			cancel()
			<-done
			t.Fatalf("no first progress event: %d %.300q", rec.Code(), rec.String())
		}
		failing.Store(true)
		// Two rechecks come and find no answer: waited for by counting
		// them, not by a window of 2 rechecks' time (a loaded machine
		// let fewer happen, and the test then proved nothing).
		for deadline := time.Now().Add(streamWait); refused.Load() < 2; time.Sleep(10 * time.Millisecond) {
			select {
			case <-done:
				t.Fatalf("the stream ended while its access could not be rechecked: %.300q", rec.String())
			default:
			}
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("%d rechecks of access in %v, want 2", refused.Load(), streamWait)
			}
		}
		// The stream acts on a recheck's answer just after the read.
		time.Sleep(progressPoll)
		select {
		case <-done:
			t.Fatalf("the stream ended while its access could not be rechecked: %.300q", rec.String())
		default:
		}
		failing.Store(false)
		if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
			t.Fatal(err)
		}
		if !waitDone(done, cancel) {
			t.Fatalf("the stream still runs %v after its reader was removed and the database answered again", streamWait)
		}
		if body := rec.String(); !strings.HasSuffix(body, "event: ended\ndata: "+streamEndedNoAccess+"\n\n") {
			t.Errorf("the stream ended without saying its reader lost access: %.300q", body[max(0, len(body)-300):])
		}
	})
}
