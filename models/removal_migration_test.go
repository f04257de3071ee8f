package models_test

import (
	"io/fs"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/batcheval/batcheval/migrations"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestWorkspaceRemovalsMigration: migration 00099 records the removals the
// audit logs hold from before it, by the address then, so a person removed
// before an upgrade is still told after it: removed by an owner (the
// remover as logged), removed themselves. It records none for an account
// that is a member again, nor for a later account that took the address
// after the entry (a stranger to the workspace), nor for the audit log's
// other entries. Its down migration drops the table, and up again works.
func TestWorkspaceRemovalsMigration(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := t.Context()
			db, err := models.Open(ctx, dbtest.DSN(t, d))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dialect, dir, fsRoot := goose.DialectSQLite3, "sqlite", migrations.SQLite
			if d == models.Postgres {
				dialect, dir, fsRoot = goose.DialectPostgres, "postgres", migrations.Postgres
			}
			fsys, err := fs.Sub(fsRoot, dir)
			if err != nil {
				t.Fatal(err)
			}
			prov, err := goose.NewProvider(dialect, db.SQL, fsys, goose.WithTableName("batcheval_schema_version"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prov.UpTo(ctx, 98); err != nil {
				t.Fatal(err)
			}
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mk := func(email string) models.User {
				t.Helper()
				u, err := db.CreateUser(ctx, ws.ID, models.RoleReviewer, models.NewUser{Email: email, Name: "N", Password: "correct horse battery"})
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			owner, gone, self, back := mk("owner@mig.test"), mk("gone@mig.test"), mk("self@mig.test"), mk("back@mig.test")
			now := time.Now().UTC().Add(time.Minute)
			logged := func(by *models.User, action, target string, at time.Time) {
				t.Helper()
				e := models.AuditEvent{WorkspaceID: ws.ID, Actor: "someone", Action: action, Target: target, CreatedAt: at}
				if by != nil {
					e.ActorUserID, e.Actor = &by.ID, by.Name+" <"+by.Email+">"
				}
				if err := db.Gorm.WithContext(ctx).Create(&e).Error; err != nil {
					t.Fatal(err)
				}
			}
			out := func(u models.User) {
				t.Helper()
				if err := db.Gorm.WithContext(ctx).Exec("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?", ws.ID, u.ID).Error; err != nil {
					t.Fatal(err)
				}
			}
			out(gone)
			logged(&owner, models.AuditMemberRemoved, gone.Email, now)
			out(self)
			logged(&self, models.AuditMemberRemoved, self.Email, now)
			logged(&owner, models.AuditMemberRole, self.Email, now) // not a removal
			// back: removed, then a member again (still is).
			logged(&owner, models.AuditMemberRemoved, back.Email, now)
			// later: an account made after the entry of its address (the
			// removed account's address released and taken since), and a
			// member of another workspace only.
			logged(&owner, models.AuditMemberRemoved, "later@mig.test", now.Add(-time.Hour))
			other, err := db.CreateWorkspace(ctx, "Other", owner.ID)
			if err != nil {
				t.Fatal(err)
			}
			later, err := db.CreateUser(ctx, other.ID, models.RoleViewer, models.NewUser{Email: "later@mig.test", Name: "L", Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}

			if err := db.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				for _, tt := range []struct {
					u    models.User
					want models.Removal
				}{
					{gone, models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, By: "N <owner@mig.test>"}},
					{self, models.Removal{WorkspaceID: ws.ID, Workspace: ws.Name, Self: true}},
					{back, models.Removal{}},
					{later, models.Removal{}},
				} {
					got, err := db.RemovalFrom(ctx, ws.ID, tt.u.ID)
					if err != nil {
						t.Fatal(err)
					}
					if got != tt.want {
						t.Errorf("%s: removal of %s = %+v, want %+v", when, tt.u.Email, got, tt.want)
					}
				}
			}
			check("after 00099")
			var n int64
			if err := db.Gorm.WithContext(ctx).Model(&models.WorkspaceRemoval{}).Count(&n).Error; err != nil || n != 2 {
				t.Errorf("after 00099: %d removals recorded (%v), want 2 (gone, self)", n, err)
			}

			if _, err := prov.DownTo(ctx, 98); err != nil {
				t.Fatalf("down from 00099: %v", err)
			}
			if err := db.Gorm.WithContext(ctx).Exec("SELECT 1 FROM workspace_removals").Error; err == nil {
				t.Error("after 00099 down the table is still there")
			}
			if err := db.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			check("after 00099 up again")
		})
	}
}
