package models_test

import (
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// errInjected is the failure failCreatesOf makes a write return.
var errInjected = errors.New("injected failure")

// failCreatesOf makes every INSERT into table on db fail (as a dropped
// connection or a refused row would) until the test ends.
func failCreatesOf(t *testing.T, db *models.DB, table string) {
	t.Helper()
	name := "test:fail-create-" + table
	err := db.Gorm.Callback().Create().Before("gorm:create").Register(name, func(tx *gorm.DB) {
		if tx.Statement.Table == table {
			_ = tx.AddError(errInjected)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Gorm.Callback().Create().Remove(name) })
}

// countRows counts table's rows matching where.
func countRows(t *testing.T, db *models.DB, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Gorm.Table(table).Where(where, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCreateWorkspaceIsOneTransaction (tryout46): a workspace, its
// simulated judge and its owner's membership are written together. A
// failure injected into any one of the writes leaves none of them, and
// the caller gets the error and no id of a rolled-back row; with no
// failure all three stand (the control).
func TestCreateWorkspaceIsOneTransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		def, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, def.ID, models.RoleOwner, models.NewUser{Email: "owner@x.test", Name: "Owner", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		for _, failing := range []string{"judges", "memberships", "workspaces"} {
			t.Run("failing "+failing, func(t *testing.T) {
				name := "Half of " + failing
				wsBefore := countRows(t, db, "workspaces", "1 = 1")
				judgesBefore := countRows(t, db, "judges", "1 = 1")
				membersBefore := countRows(t, db, "memberships", "user_id = ?", owner.ID)
				failCreatesOf(t, db, failing)
				ws, err := db.CreateWorkspace(ctx, name, owner.ID)
				if !errors.Is(err, errInjected) {
					t.Fatalf("CreateWorkspace with %s failing: err %v, want the injected failure", failing, err)
				}
				if ws.ID != 0 {
					t.Errorf("CreateWorkspace failed but returned workspace id %d", ws.ID)
				}
				if n := countRows(t, db, "workspaces", "1 = 1"); n != wsBefore {
					t.Errorf("workspaces: %d after the failure, %d before", n, wsBefore)
				}
				if n := countRows(t, db, "judges", "1 = 1"); n != judgesBefore {
					t.Errorf("judges: %d after the failure, %d before", n, judgesBefore)
				}
				if n := countRows(t, db, "memberships", "user_id = ?", owner.ID); n != membersBefore {
					t.Errorf("owner's memberships: %d after the failure, %d before", n, membersBefore)
				}
			})
		}
		ws, err := db.CreateWorkspace(ctx, "Whole", owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, db, "judges", "workspace_id = ? AND simulated = ?", ws.ID, true); n != 1 {
			t.Errorf("a new workspace has %d simulated judges, want 1", n)
		}
		if n := countRows(t, db, "memberships", "workspace_id = ? AND user_id = ? AND role = ?", ws.ID, owner.ID, models.RoleOwner); n != 1 {
			t.Errorf("a new workspace has %d owner memberships of its creator, want 1", n)
		}
	})
}

// TestDefaultWorkspaceComesWithItsJudge (tryout46): the default workspace
// made on a fresh database and its simulated judge are one transaction.
// With the judge's write failing, no workspace is left behind (the old
// code left one without its judge); once the failure is gone, the next
// start makes both.
func TestDefaultWorkspaceComesWithItsJudge(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		if n := countRows(t, db, "workspaces", "1 = 1"); n != 0 {
			t.Fatalf("a fresh database has %d workspaces", n)
		}
		t.Run("judge failing", func(t *testing.T) {
			failCreatesOf(t, db, "judges")
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if !errors.Is(err, errInjected) {
				t.Fatalf("EnsureDefaultWorkspace with the judge failing: err %v, want the injected failure", err)
			}
			if ws.ID != 0 {
				t.Errorf("EnsureDefaultWorkspace failed but returned workspace id %d", ws.ID)
			}
			if n := countRows(t, db, "workspaces", "slug = ?", models.DefaultWorkspaceSlug); n != 0 {
				t.Errorf("the failed start left %d default workspaces without their judge", n)
			}
		})
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, db, "judges", "workspace_id = ? AND simulated = ?", ws.ID, true); n != 1 {
			t.Errorf("the default workspace has %d simulated judges, want 1", n)
		}
	})
}
