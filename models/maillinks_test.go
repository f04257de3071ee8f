package models_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestLinkRowNotStoredWithoutItsMail: when the link's mail cannot be
// queued, the invite, reset or confirmation link is not stored either
// (before, the row was committed first and its mail queued afterwards, so
// a failure to queue left a link nobody was sent). And RemintLink gives a
// stored link a new token: the one made with the row stops working.
func TestLinkRowNotStoredWithoutItsMail(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		bob, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "bob@company.com", Name: "Bob", Password: "a long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		refuse := func(context.Context, *sql.Tx, int64) error { return errors.New("the queue is full") }
		if _, _, err := db.CreateInviteFor(ctx, ws.ID, models.RoleEditor, owner.ID, models.InviteTTL, "cleo@company.com", models.Audit[models.Invite]{}, refuse); err == nil {
			t.Fatal("invite stored though its mail was not queued")
		}
		if invs, _ := db.ListOpenInvites(ctx, ws.ID); len(invs) != 0 {
			t.Fatalf("invites left: %+v", invs)
		}
		if _, _, err := db.CreatePasswordReset(ctx, owner.ID, bob.ID, models.ResetTTL, refuse); err == nil {
			t.Fatal("reset stored though its mail was not queued")
		}
		var n int64
		if err := db.Gorm.Model(&models.PasswordReset{}).Count(&n).Error; err != nil || n != 0 {
			t.Fatalf("%d resets left (%v)", n, err)
		}
		if _, _, err := db.RequestAddressConfirmation(ctx, bob.ID, "", refuse); err == nil {
			t.Fatal("confirmation stored though its mail was not queued")
		}
		if err := db.Gorm.Model(&models.EmailConfirmation{}).Count(&n).Error; err != nil || n != 0 {
			t.Fatalf("%d confirmations left (%v)", n, err)
		}

		var queued int64
		inv, token, err := db.CreateInviteFor(ctx, ws.ID, models.RoleEditor, owner.ID, models.InviteTTL, "cleo@company.com", models.Audit[models.Invite]{},
			func(_ context.Context, _ *sql.Tx, id int64) error { queued = id; return nil })
		if err != nil || queued != inv.ID {
			t.Fatalf("queued %d for invite %d: %v", queued, inv.ID, err)
		}
		l, ok, err := db.RemintLink(ctx, models.LinkInvite, inv.ID, false)
		if err != nil || !ok || l.To != "cleo@company.com" || l.Workspace != ws.Name || l.Inviter != "Ada" {
			t.Fatalf("remint = %+v %v %v", l, ok, err)
		}
		if _, _, err := db.FindOpenInvite(ctx, token, 0); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("the token made with the row still opens the invite: %v", err)
		}
		if _, _, err := db.FindOpenInvite(ctx, l.Path[len("/invites/"):], 0); err != nil {
			t.Fatalf("the new token: %v", err)
		}
		if err := db.RevokeInvite(ctx, ws.ID, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := db.RemintLink(ctx, models.LinkInvite, inv.ID, false); ok || err != nil {
			t.Fatalf("a revoked invite's link was made again: %v %v", ok, err)
		}
	})
}
