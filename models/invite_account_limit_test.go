package models_test

import (
	"errors"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestInviteLimitPerAccountAcrossWorkspaces: an account makes at most
// models.InvitesPerHour invite links an hour in all its workspaces
// together. The bound was per workspace only, and anyone signed in can
// make workspaces at will: Mallory made a workspace for every 30 links,
// each link testing one address for an account (or, with mail, mailing an
// invite with a workspace name of her choosing to any address). Another
// owner of the same workspace is not held back by her count.
func TestInviteLimitPerAccountAcrossWorkspaces(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		def, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mallory, err := db.CreateUser(ctx, def.ID, models.RoleViewer, models.NewUser{Email: "mallory@a.test", Name: "Mallory", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		var last models.Workspace
		for w := range 3 {
			ws, err := db.CreateWorkspace(ctx, "corner", mallory.ID)
			if err != nil {
				t.Fatal(err)
			}
			last = ws
			for i := range models.InvitesPerHour / 2 {
				_, _, err := db.CreateInvite(ctx, ws.ID, models.RoleViewer, mallory.ID, models.InviteTTL)
				n := w*models.InvitesPerHour/2 + i + 1
				var le *models.InviteLimitError
				switch {
				case n <= models.InvitesPerHour && err != nil:
					t.Fatalf("invite %d: %v", n, err)
				case n > models.InvitesPerHour && (!errors.As(err, &le) || !le.Account || time.Until(le.RetryAt) <= 0):
					t.Fatalf("invite %d of one account (workspace %d) = %v, want the account's limit", n, w+1, err)
				}
			}
		}
		// Ada, another owner of Mallory's last workspace, makes hers.
		ada, err := db.CreateUser(ctx, last.ID, models.RoleOwner, models.NewUser{Email: "ada@a.test", Name: "Ada", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateInvite(ctx, last.ID, models.RoleViewer, ada.ID, models.InviteTTL); err != nil {
			t.Fatalf("another owner's invite in the workspace: %v", err)
		}
	})
}
