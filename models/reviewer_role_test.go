package models_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/batcheval/batcheval/migrations"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRoleOrder: a reviewer sits between viewer and editor, so every check
// for an editor refuses one and every check for a viewer admits one, and
// ParseRole reads the name (and names it when refusing another).
func TestRoleOrder(t *testing.T) {
	cases := []struct {
		role                            models.Role
		viewer, reviewer, editor, owner bool
	}{
		{models.RoleViewer, true, false, false, false},
		{models.RoleReviewer, true, true, false, false},
		{models.RoleEditor, true, true, true, false},
		{models.RoleOwner, true, true, true, true},
		{models.Role("boss"), false, false, false, false},
	}
	for _, c := range cases {
		got := []bool{c.role.AtLeast(models.RoleViewer), c.role.AtLeast(models.RoleReviewer), c.role.AtLeast(models.RoleEditor), c.role.AtLeast(models.RoleOwner)}
		want := []bool{c.viewer, c.reviewer, c.editor, c.owner}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s.AtLeast(%s) = %v, want %v", c.role, models.Roles[i], got[i], want[i])
			}
		}
	}
	if want := []models.Role{models.RoleViewer, models.RoleReviewer, models.RoleEditor, models.RoleOwner}; len(models.Roles) != len(want) {
		t.Fatalf("Roles = %v, want %v", models.Roles, want)
	}
	for i := 1; i < len(models.Roles); i++ {
		if models.Roles[i-1].Rank() >= models.Roles[i].Rank() {
			t.Errorf("Roles not weakest first: %s (%d) before %s (%d)", models.Roles[i-1], models.Roles[i-1].Rank(), models.Roles[i], models.Roles[i].Rank())
		}
		if models.Roles[i].Allows() == "" {
			t.Errorf("role %s has no description of what it allows", models.Roles[i])
		}
	}
	if r, err := models.ParseRole(" Reviewer "); err != nil || r != models.RoleReviewer {
		t.Errorf("ParseRole(\" Reviewer \") = %q, %v; want reviewer", r, err)
	}
	_, err := models.ParseRole("rater")
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.EInvalid || e.Message != `"rater" is not a role: choose owner, editor, reviewer or viewer` {
		t.Errorf("ParseRole(rater) = %v, want an invalid error naming the four roles", err)
	}
}

// TestReviewerRoleMigration: migration 00096 lets memberships and invites
// hold the reviewer role on a database that already has members, invites
// and an invite's pending address confirmation, keeping every row, id,
// index and reference (SQLite copies both tables); its down migration
// makes reviewers viewers (never editors) and shuts the name out again.
func TestReviewerRoleMigration(t *testing.T) {
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
			if _, err := prov.UpTo(ctx, 95); err != nil {
				t.Fatal(err)
			}
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mk := func(email string, role models.Role) models.User {
				t.Helper()
				u, err := db.CreateUser(ctx, ws.ID, role, models.NewUser{Email: email, Name: email, Password: "correct horse battery"})
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			owner := mk("owner@mig.test", models.RoleOwner)
			viewer := mk("viewer@mig.test", models.RoleViewer)
			editor := mk("editor@mig.test", models.RoleEditor)
			// The newest membership is removed: its id must not be
			// handed out again after the copy.
			gone := mk("gone@mig.test", models.RoleViewer)
			goneMembership := membershipID(t, db, ws.ID, gone.ID)
			// A bare delete: before 00099 there is no removals table for
			// RemoveMember to record the removal in.
			if err := db.Gorm.WithContext(ctx).Exec("DELETE FROM memberships WHERE id = ?", goneMembership).Error; err != nil {
				t.Fatal(err)
			}
			// Before 00096 the schema refuses the name.
			if err := db.SetMemberRole(ctx, ws.ID, viewer.ID, models.RoleReviewer); err == nil {
				t.Fatal("before 00096 a member became a reviewer")
			}
			inv, invToken, err := db.CreateInvite(ctx, ws.ID, models.RoleEditor, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			conf, _, err := db.AnswerInviteByMail(ctx, invToken, "new@mig.test")
			if err != nil {
				t.Fatal(err)
			}
			revoked, _, err := db.CreateInvite(ctx, ws.ID, models.RoleViewer, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Gorm.WithContext(ctx).Exec("DELETE FROM invites WHERE id = ?", revoked.ID).Error; err != nil {
				t.Fatal(err)
			}

			if err := db.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			wantRoles := map[int64]models.Role{owner.ID: models.RoleOwner, viewer.ID: models.RoleViewer, editor.ID: models.RoleEditor}
			checkRoles(t, db, ws.ID, wantRoles, "after 00096")
			checkConfirmation(t, db, conf.ID, inv.ID, "after 00096")
			if d == models.SQLite {
				checkSQLiteSchema(t, db, "after 00096")
			}

			// Now a member becomes a reviewer, an invite makes one, and
			// new rows take ids above every one ever handed out.
			if err := db.SetMemberRole(ctx, ws.ID, viewer.ID, models.RoleReviewer); err != nil {
				t.Fatalf("make a viewer a reviewer after 00096: %v", err)
			}
			revInv, _, err := db.CreateInvite(ctx, ws.ID, models.RoleReviewer, owner.ID, time.Hour)
			if err != nil {
				t.Fatalf("invite as reviewer after 00096: %v", err)
			}
			if revInv.ID <= revoked.ID {
				t.Errorf("a new invite got id %d, not above the deleted invite's %d", revInv.ID, revoked.ID)
			}
			fresh := mk("fresh@mig.test", models.RoleReviewer)
			if id := membershipID(t, db, ws.ID, fresh.ID); id <= goneMembership {
				t.Errorf("a new membership got id %d, not above the removed one's %d", id, goneMembership)
			}
			if err := db.Gorm.WithContext(ctx).Exec("UPDATE memberships SET role = 'boss' WHERE user_id = ?", editor.ID).Error; err == nil {
				t.Error("after 00096 a membership took the role 'boss'")
			}
			wantRoles[viewer.ID], wantRoles[fresh.ID] = models.RoleReviewer, models.RoleReviewer
			checkRoles(t, db, ws.ID, wantRoles, "reviewers made")

			// Down: reviewers become viewers, the invite too; nothing
			// else changes, and the name is refused again.
			if _, err := prov.DownTo(ctx, 95); err != nil {
				t.Fatalf("down from 00096: %v", err)
			}
			wantRoles[viewer.ID], wantRoles[fresh.ID] = models.RoleViewer, models.RoleViewer
			checkRoles(t, db, ws.ID, wantRoles, "after 00096 down")
			checkConfirmation(t, db, conf.ID, inv.ID, "after 00096 down")
			var invRole string
			if err := db.Gorm.WithContext(ctx).Raw("SELECT role FROM invites WHERE id = ?", revInv.ID).Scan(&invRole).Error; err != nil || invRole != "viewer" {
				t.Errorf("reviewer invite after down: role %q, %v; want viewer", invRole, err)
			}
			if err := db.SetMemberRole(ctx, ws.ID, viewer.ID, models.RoleReviewer); err == nil {
				t.Error("after 00096 down a member became a reviewer")
			}
			if d == models.SQLite {
				checkSQLiteSchema(t, db, "after 00096 down")
			}
			// And up again.
			if err := db.MigrateSchema(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if err := db.SetMemberRole(ctx, ws.ID, viewer.ID, models.RoleReviewer); err != nil {
				t.Errorf("after 00096 up again: %v", err)
			}
		})
	}
}

func membershipID(t *testing.T, db *models.DB, wsID, userID int64) int64 {
	t.Helper()
	var id int64
	if err := db.Gorm.Raw("SELECT id FROM memberships WHERE workspace_id = ? AND user_id = ?", wsID, userID).Scan(&id).Error; err != nil || id == 0 {
		t.Fatalf("membership of user %d: id %d, %v", userID, id, err)
	}
	return id
}

func checkRoles(t *testing.T, db *models.DB, wsID int64, want map[int64]models.Role, when string) {
	t.Helper()
	members, err := db.ListMembers(context.Background(), wsID)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != len(want) {
		t.Errorf("%s: %d members, want %d", when, len(members), len(want))
	}
	for _, m := range members {
		if m.Role != want[m.User.ID] {
			t.Errorf("%s: %s is %q, want %q", when, m.User.Email, m.Role, want[m.User.ID])
		}
	}
}

// checkConfirmation: the invite's pending address confirmation survived
// the copy of invites, still pointing at its invite.
func checkConfirmation(t *testing.T, db *models.DB, confID, inviteID int64, when string) {
	t.Helper()
	var got struct{ InviteID *int64 }
	if err := db.Gorm.Raw("SELECT invite_id FROM email_confirmations WHERE id = ?", confID).Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	if got.InviteID == nil || *got.InviteID != inviteID {
		t.Errorf("%s: the invite's address confirmation points at %v, want invite %d", when, got.InviteID, inviteID)
	}
}

// checkSQLiteSchema: the copied tables keep their indexes, and every
// foreign key still holds.
func checkSQLiteSchema(t *testing.T, db *models.DB, when string) {
	t.Helper()
	for _, idx := range []string{"memberships_user", "invites_workspace"} {
		var n int64
		if err := db.Gorm.Raw("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?", idx).Scan(&n).Error; err != nil || n != 1 {
			t.Errorf("%s: index %s: %d, %v", when, idx, n, err)
		}
	}
	var leftovers int64
	if err := db.Gorm.Raw("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%\\_new' ESCAPE '\\' OR name LIKE 'migration\\_00096%' ESCAPE '\\'").Scan(&leftovers).Error; err != nil || leftovers != 0 {
		t.Errorf("%s: %d tables of the copy left behind, %v", when, leftovers, err)
	}
	rows, err := db.SQL.Query("PRAGMA foreign_key_check")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if rows.Next() {
		t.Errorf("%s: PRAGMA foreign_key_check reports a broken reference", when)
	}
}
