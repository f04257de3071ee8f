package models_test

import (
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRemovedFromWorkspaceOf: the removal is found only for an object of a
// workspace the account is not a member of and whose log records the
// removal of its address; the remover is the log's actor, or Self when
// they removed themselves. An unknown kind, a missing object, a member
// (again), a stranger and a removal of another address find nothing.
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
		owner, gone, self, back, stranger := user("own@x.test"), user("gone@x.test"), user("self@x.test"), user("back@x.test"), user("stranger@x.test")
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
		// stranger: removed without a log entry (as if never a member).
		if _, err := db.RemoveMember(ctx, ws.ID, stranger.ID, false); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			kind  string
			id    int64
			u     models.User
			email string
			want  *models.Removal
		}{
			{"removed by an owner", "projects", p.ID, gone, gone.Email, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, By: "N <own@x.test>"}},
			{"removed themselves", "projects", p.ID, self, self.Email, &models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, Self: true}},
			{"member again", "projects", p.ID, back, back.Email, nil},
			{"no removal on record", "projects", p.ID, stranger, stranger.Email, nil},
			{"address changed since", "projects", p.ID, gone, "new@x.test", nil},
			{"a member", "projects", p.ID, owner, owner.Email, nil},
			{"no such object", "projects", p.ID + 1000, gone, gone.Email, nil},
			{"unknown kind", "members", p.ID, gone, gone.Email, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, ok, err := db.RemovedFromWorkspaceOf(ctx, tt.kind, tt.id, tt.u.ID, tt.email)
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
