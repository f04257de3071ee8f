package models_test

import (
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRemovedFromWorkspaceOf: the removal is found only for an object of a
// workspace the account is not a member of and whose removal of that
// account is recorded (WorkspaceRemoval), matched by the account whatever
// its address is now; the remover is the audit's actor, or Self when they
// removed themselves, or "" for a removal written without an audit entry;
// an address released by the operator is its removal too.
// An unknown kind, a missing object, a member (again) and a stranger (never
// a member) find nothing. On the old code (the audit log matched by
// address) a removal without an entry and an address changed since found
// nothing either.
func TestRemovedFromWorkspaceOf(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "P"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		user := func(email string) models.User {
			u, err := db.CreateUser(ctx, ws.ID, models.RoleReviewer, models.NewUser{Email: email, Name: "N", Password: "long enough password"})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		owner, gone, self, back := user("own@x.test"), user("gone@x.test"), user("self@x.test"), user("back@x.test")
		remove := func(u, by models.User) {
			t.Helper()
			_, err := db.RemoveMember(ctx, ws.ID, u.ID, false, models.Audit[int64]{
				Event: models.AuditEvent{WorkspaceID: ws.ID, ActorUserID: &by.ID, Actor: by.Name + " <" + by.Email + ">"},
				Describe: func(int64) models.AuditNote {
					return models.AuditNote{Action: models.AuditMemberRemoved, Target: u.Email}
				}})
			if err != nil {
				t.Fatal(err)
			}
		}
		remove(gone, owner)
		remove(self, self)
		remove(back, owner)
		if err := db.Gorm.Create(&models.Membership{WorkspaceID: ws.ID, UserID: back.ID, Role: models.RoleViewer, CreatedAt: time.Now().UTC()}).Error; err != nil {
			t.Fatal(err)
		}
		// quiet: removed without an audit entry (a server process, a test
		// helper); moved: removed, then changed their address.
		quiet, moved := user("quiet@x.test"), user("moved@x.test")
		if _, err := db.RemoveMember(ctx, ws.ID, quiet.ID, false); err != nil {
			t.Fatal(err)
		}
		remove(moved, owner)
		if err := db.Gorm.Model(&models.User{}).Where("id = ?", moved.ID).Update("email", "new@x.test").Error; err != nil {
			t.Fatal(err)
		}
		// released: the operator released the account's address, which
		// ended its memberships.
		released := user("released@x.test")
		if _, err := db.ReleaseAddress(ctx, released.Email, "", ""); err != nil {
			t.Fatal(err)
		}
		// stranger: a member of another workspace only, never of ws.
		other, err := db.CreateWorkspace(ctx, "Other", owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		stranger, err := db.CreateUser(ctx, other.ID, models.RoleReviewer, models.NewUser{Email: "stranger@x.test", Name: "N", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			kind string
			id   int64
			u    models.User
			want *models.Removal
		}{
			{"removed by an owner", "projects", p.ID, gone, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, By: "N <own@x.test>"}},
			{"removed themselves", "projects", p.ID, self, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, Self: true}},
			{"member again", "projects", p.ID, back, nil},
			{"removed without an audit entry", "projects", p.ID, quiet, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name}},
			{"address changed since", "projects", p.ID, moved, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, By: "N <own@x.test>"}},
			{"address released by the operator", "projects", p.ID, released, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, By: models.OperatorActor}},
			{"never a member", "projects", p.ID, stranger, nil},
			{"a member", "projects", p.ID, owner, nil},
			{"no such object", "projects", p.ID + 1000, gone, nil},
			{"unknown kind", "members", p.ID, gone, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, ok, err := db.RemovedFromWorkspaceOf(ctx, tt.kind, tt.id, tt.u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (tt.want != nil) || (ok && got != *tt.want) {
					t.Errorf("got %+v, %v; want %+v", got, ok, tt.want)
				}
			})
		}
	})
}
