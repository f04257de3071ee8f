package models_test

import (
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRecordFailedSignIn: a failed sign-in's entry goes into the log of
// every workspace of the account with the address typed (in any case,
// with spaces around it), with who, when and from where, and nowhere for
// an address no account has or an account in no workspace. One statement
// does it for every address (the sign-in handler's tests count them).
func TestRecordFailedSignIn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ada, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@a.test", Name: "Ada", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		second, err := db.CreateWorkspace(ctx, "Second", ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		// An account in no workspace: made in the default one, then
		// removed from it.
		loner, err := db.CreateUser(ctx, ws.ID, models.RoleViewer, models.NewUser{Email: "loner@a.test", Name: "Loner", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.RemoveMember(ctx, ws.ID, loner.ID, false); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 6, 16, 40, 5, 123456000, time.UTC)
		for _, tc := range []struct {
			name    string
			typed   string
			entries map[int64]int // workspace -> failed sign-ins of ada written
		}{
			{name: "account in two workspaces", typed: "ada@a.test", entries: map[int64]int{ws.ID: 1, second.ID: 1}},
			{name: "typed in capitals with spaces", typed: "  ADA@A.test ", entries: map[int64]int{ws.ID: 1, second.ID: 1}},
			{name: "unknown address", typed: "eve@a.test", entries: map[int64]int{}},
			{name: "account in no workspace", typed: "loner@a.test", entries: map[int64]int{}},
			{name: "hostile text", typed: "ada@a.test' OR '1'='1", entries: map[int64]int{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := map[int64]int64{}
				for _, w := range []int64{ws.ID, second.ID} {
					before[w] = lastAuditID(t, db, w)
				}
				if err := db.RecordFailedSignIn(ctx, tc.typed, models.AuditEvent{Actor: "anonymous", Address: "203.0.113.7", CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
				for _, w := range []int64{ws.ID, second.ID} {
					evs, err := db.ListAudit(ctx, w, 0, 100)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, e := range evs {
						if e.ID <= before[w] {
							continue
						}
						n++
						if e.WorkspaceID != w || e.Action != models.AuditSignInFailed || e.Actor != "anonymous" || e.ActorUserID != nil ||
							e.Target != ada.Email || e.Detail != "wrong password for "+ada.Email || e.Address != "203.0.113.7" || !e.CreatedAt.Equal(at) {
							t.Errorf("workspace %d: entry %+v, want sign-in-failed by anonymous naming %s from 203.0.113.7 at %s", w, e, ada.Email, at)
						}
					}
					if n != tc.entries[w] {
						t.Errorf("workspace %d: %d entries written, want %d", w, n, tc.entries[w])
					}
				}
			})
		}
	})
}

// lastAuditID is the id of workspace wsID's newest audit entry (0: none).
func lastAuditID(t *testing.T, db *models.DB, wsID int64) int64 {
	t.Helper()
	evs, err := db.ListAudit(t.Context(), wsID, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		return 0
	}
	return evs[0].ID
}
