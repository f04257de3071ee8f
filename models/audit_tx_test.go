package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// failAuditInserts makes every insert into the workspaces' audit log fail
// until the returned function is called.
func failAuditInserts(t *testing.T, db *models.DB) (stop func()) {
	t.Helper()
	on, off := []string{`CREATE TRIGGER audit48_refuse BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`},
		[]string{`DROP TRIGGER audit48_refuse`}
	if db.Dialect == models.Postgres {
		on = []string{
			`CREATE OR REPLACE FUNCTION audit48_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
			`CREATE TRIGGER audit48_refuse BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit48_refuse()`,
		}
		off = []string{`DROP TRIGGER audit48_refuse ON audit_events`}
	}
	for _, s := range on {
		if err := db.Gorm.Exec(s).Error; err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return func() {
		for _, s := range off {
			if err := db.Gorm.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
}

// TestAuditedWrites (audit48): a models write given an Audit writes its
// entry in its own transaction. When the entry is refused, the write is
// rolled back and its error says so (code internal, ErrAuditNotWritten
// under it, a message saying nothing was changed). A write that changes
// nothing records nothing (a token revoked already, ratings excluded
// already), and a purge resumed over an entry marked before (a purge cut
// short) finishes without a second entry. A zero Audit records nothing.
func TestAuditedWrites(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		ws := w.ws.ID
		owner, err := db.CreateUser(ctx, ws, models.RoleOwner, models.NewUser{Email: "own@a.test", Name: "Own", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		ed, err := db.CreateUser(ctx, ws, models.RoleEditor, models.NewUser{Email: "ed@a.test", Name: "Ed", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		audit := func(action string) models.Audit[struct{}] {
			return models.Audit[struct{}]{Event: models.AuditEvent{WorkspaceID: ws, ActorUserID: &owner.ID, Actor: "Own <own@a.test>", Address: "192.0.2.1"},
				Describe: func(struct{}) models.AuditNote { return models.AuditNote{Action: action, Target: "ed@a.test"} }}
		}
		entries := func(action string) int64 {
			var n int64
			if err := db.Gorm.Model(&models.AuditEvent{}).Where("workspace_id = ? AND action = ?", ws, action).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}

		t.Run("a refused entry rolls the write back", func(t *testing.T) {
			stop := failAuditInserts(t, db)
			err := db.SetMemberRole(ctx, ws, ed.ID, models.RoleViewer, audit(models.AuditMemberRole))
			stop()
			if !errors.Is(err, models.ErrAuditNotWritten) || models.ErrorCode(err) != models.EInternal {
				t.Fatalf("SetMemberRole with the log refusing: %v (code %q), want ErrAuditNotWritten, internal", err, models.ErrorCode(err))
			}
			if role, _ := db.MemberRole(ctx, ws, ed.ID); role != models.RoleEditor {
				t.Errorf("role after a refused entry: %s, want editor", role)
			}
			if err := db.SetMemberRole(ctx, ws, ed.ID, models.RoleViewer, audit(models.AuditMemberRole)); err != nil {
				t.Fatal(err)
			}
			var e models.AuditEvent
			if err := db.Gorm.Where("workspace_id = ? AND action = ?", ws, models.AuditMemberRole).First(&e).Error; err != nil {
				t.Fatal(err)
			}
			if e.Actor != "Own <own@a.test>" || e.ActorUserID == nil || *e.ActorUserID != owner.ID || e.Address != "192.0.2.1" || e.Target != "ed@a.test" {
				t.Errorf("entry written: %+v, want the event's actor, address and the described target", e)
			}
		})

		t.Run("a zero Audit records nothing", func(t *testing.T) {
			before := entries(models.AuditMemberRole)
			if err := db.SetMemberRole(ctx, ws, ed.ID, models.RoleEditor, models.Audit[struct{}]{}); err != nil {
				t.Fatal(err)
			}
			if got := entries(models.AuditMemberRole); got != before {
				t.Errorf("%d role entries after a write with a zero Audit, want %d", got, before)
			}
		})

		t.Run("a token revoked already records nothing", func(t *testing.T) {
			tok, _, err := db.CreateAPIToken(ctx, ws, ed.ID, "ci")
			if err != nil {
				t.Fatal(err)
			}
			revoked := models.Audit[models.APIToken]{Event: models.AuditEvent{WorkspaceID: ws, Actor: "Own"},
				Describe: func(tok models.APIToken) models.AuditNote {
					return models.AuditNote{Action: "api-token-revoked", Target: tok.Name}
				}}
			for range 2 {
				if _, err := db.RevokeAPIToken(ctx, ws, ed.ID, tok.ID, revoked); err != nil {
					t.Fatal(err)
				}
			}
			if got := entries("api-token-revoked"); got != 1 {
				t.Errorf("%d entries after revoking one token twice, want 1", got)
			}
		})

		t.Run("a purge resumed records nothing again", func(t *testing.T) {
			p := models.Project{WorkspaceID: ws, Name: "Scratch"}
			if err := db.CreateProject(ctx, &p); err != nil {
				t.Fatal(err)
			}
			e, _, err := db.Trash(ctx, ws, models.KindProject, p.ID, models.Actor{Label: "test"})
			if err != nil {
				t.Fatal(err)
			}
			purged := models.Audit[models.TrashEntry]{Event: models.AuditEvent{WorkspaceID: ws, Actor: "Own"},
				Describe: func(e models.TrashEntry) models.AuditNote {
					return models.AuditNote{Action: models.AuditPurged, Target: e.Name}
				}}
			// Marked by a purge cut short, which wrote its entry then.
			if err := db.Gorm.Model(&models.TrashEntry{}).Where("id = ?", e.ID).Update("purging_at", time.Now().UTC()).Error; err != nil {
				t.Fatal(err)
			}
			before := entries(models.AuditPurged)
			if _, _, err := db.Purge(ctx, ws, e.ID, purged); err != nil {
				t.Fatal(err)
			}
			if got := entries(models.AuditPurged); got != before {
				t.Errorf("%d purge entries after resuming a marked purge, want %d", got, before)
			}
			var left int64
			if err := db.Gorm.Model(&models.Project{}).Where("id = ?", p.ID).Count(&left).Error; err != nil {
				t.Fatal(err)
			}
			if left != 0 {
				t.Errorf("the resumed purge left the project")
			}
		})
	})
}
