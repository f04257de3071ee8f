package models_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReleaseAddress: on both databases, releasing an address renames the
// account to a placeholder, voids its password, sessions, tokens and reset
// links, audits it in its workspaces, and frees the address; an unknown
// address changes nothing. ListAccounts lists accounts with workspaces.
func TestReleaseAddress(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "own@x.test", Name: "Own", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		sq, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "ceo@x.test", Name: "Squat", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateAPIToken(ctx, ws.ID, sq.ID, "t"); err != nil {
			t.Fatal(err)
		}
		_, resetTok, err := db.CreatePasswordReset(ctx, owner.ID, sq.ID, models.ResetTTL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ReleaseAddress(ctx, "nobody@x.test", "", ""); models.ErrorCode(err) != models.ENotFound || !strings.Contains(err.Error(), "nobody@x.test") {
			t.Fatalf("unknown address: %v", err)
		}
		r, err := db.ReleaseAddress(ctx, "CEO@x.test", "ticket 7", "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Tokens != 1 || r.Email != "ceo@x.test" || len(r.Workspaces) != 1 {
			t.Fatalf("release: %+v", r)
		}
		u, err := db.FindUser(ctx, sq.ID)
		if err != nil || u.Email != r.NewEmail || u.SessionEpoch != sq.SessionEpoch+1 || u.EmailConfirmedAt != nil {
			t.Fatalf("after release: %+v %v", u, err)
		}
		if _, err := db.Authenticate(ctx, r.NewEmail, "long enough password"); err == nil {
			t.Fatal("the released account signs in")
		}
		if _, err := db.ResetPassword(ctx, resetTok, "another long password"); err == nil {
			t.Fatal("a reset link issued before the release still works")
		}
		if _, err := db.FindUserByEmail(ctx, "ceo@x.test"); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("the address is still held: %v", err)
		}
		if _, err := db.CreateUser(ctx, ws.ID, models.RoleViewer, models.NewUser{Email: "ceo@x.test", Name: "Cleo", Password: "long enough password"}); err != nil {
			t.Fatalf("registering the released address: %v", err)
		}
		evs, err := db.ListAudit(ctx, ws.ID, 0, 5)
		if err != nil || evs[0].Action != models.AuditAddressReleased || !strings.Contains(evs[0].Detail, "ticket 7") {
			t.Fatalf("audit: %+v %v", evs, err)
		}
		accts, err := db.ListAccounts(ctx)
		if err != nil || len(accts) != 3 {
			t.Fatalf("accounts: %+v %v", accts, err)
		}
		for _, a := range accts {
			if want := a.User.ID != sq.ID; (len(a.Workspaces) == 1 && a.Workspaces[0].Workspace.ID == ws.ID) != want {
				t.Fatalf("%s's workspaces: %+v (a member: want %v)", a.User.Email, a.Workspaces, want)
			}
		}
		// The operator's reset works for any account.
		u, tok, err := db.OperatorPasswordReset(ctx, r.NewEmail, models.ResetTTL)
		if err != nil || u.ID != sq.ID {
			t.Fatal(err)
		}
		if _, err := db.ResetPassword(ctx, tok, "another long password"); err != nil {
			t.Fatalf("the operator's reset: %v", err)
		}
	})
}

// TestConfirmSignup: on both databases, answering an invite by mail makes
// no account; the mailed link makes it, confirmed and a member, once.
// An existing account confirms only signed in as itself.
func TestConfirmSignup(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "own@x.test", Name: "Own", Password: "long enough password"})
		if err != nil {
			t.Fatal(err)
		}
		_, invTok, err := db.CreateInvite(ctx, ws.ID, models.RoleEditor, owner.ID, models.InviteTTL)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AnswerInviteByMail(ctx, invTok, "not an address"); models.ErrorCode(err) != models.EInvalid {
			t.Fatalf("bad address: %v", err)
		}
		_, tok, err := db.AnswerInviteByMail(ctx, invTok, "New@X.test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindUserByEmail(ctx, "new@x.test"); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("answering by mail made an account: %v", err)
		}
		target, err := db.FindOpenConfirmation(ctx, tok)
		if err != nil || target.Account != nil || target.Invite == nil || target.Workspace.ID != ws.ID {
			t.Fatalf("confirmation: %+v %v", target, err)
		}
		if _, _, err := db.ConfirmSignup(ctx, tok, "New", "short"); models.ErrorCode(err) != models.EInvalid {
			t.Fatalf("weak password: %v", err)
		}
		u, inv, err := db.ConfirmSignup(ctx, tok, "New", "long enough password")
		if err != nil || u.EmailConfirmedAt == nil || inv.WorkspaceID != ws.ID {
			t.Fatalf("confirm: %+v %+v %v", u, inv, err)
		}
		if role, err := db.MemberRole(ctx, ws.ID, u.ID); err != nil || role != models.RoleEditor {
			t.Fatalf("role: %v %v", role, err)
		}
		if _, _, err := db.ConfirmSignup(ctx, tok, "New", "long enough password"); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("second use: %v", err)
		}

		// An existing account's address, confirmed by itself only.
		_, tok2, err := db.RequestAddressConfirmation(ctx, owner.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.ConfirmAddress(ctx, tok2, u.ID); models.ErrorCode(err) != models.EUnauthorized {
			t.Fatalf("another account confirms: %v", err)
		}
		_, tok3, err := db.RequestAddressConfirmation(ctx, owner.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		got, joined, err := db.ConfirmAddress(ctx, tok3, owner.ID)
		if err != nil || got.EmailConfirmedAt == nil || joined != nil {
			t.Fatalf("confirm own address: %+v %v %v", got, joined, err)
		}

		// An invite answers at most MaxAnswersPerInvite times.
		_, inv2, err := db.CreateInvite(ctx, ws.ID, models.RoleViewer, owner.ID, models.InviteTTL)
		if err != nil {
			t.Fatal(err)
		}
		for i := range models.MaxAnswersPerInvite + 1 {
			_, _, err := db.AnswerInviteByMail(ctx, inv2, "a@x.test")
			if (i < models.MaxAnswersPerInvite) != (err == nil) {
				t.Fatalf("answer %d: %v", i+1, err)
			}
		}
	})
}

// TestReleaseAddressTakesTheAccountOutOfItsWorkspaces: on both databases a
// released account is a member of none of its workspaces, and the share
// links it made no longer open; a release that would leave a workspace it
// alone owns without an owner is refused naming the workspace and
// --transfer-to, changing nothing, and with a new owner named (a member
// or not) that account owns it, audited, in the same transaction.
// Before, the released account stayed in its workspaces, possibly as the
// only owner of one.
func TestReleaseAddressTakesTheAccountOutOfItsWorkspaces(t *testing.T) {
	for _, tc := range []struct {
		name, heir string
		wasMember  bool
	}{
		{"heir a member", "ed@x.test", true},
		{"heir from elsewhere", "out@x.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				ctx := t.Context()
				w := newWorld(t, db)
				sq, err := db.CreateUser(ctx, w.ws.ID, models.RoleOwner, models.NewUser{Email: "sq@x.test", Name: "Squat", Password: "long enough password"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.CreateUser(ctx, w.ws.ID, models.RoleEditor, models.NewUser{Email: "ed@x.test", Name: "Ed", Password: "long enough password"}); err != nil {
					t.Fatal(err)
				}
				out, err := db.CreateUser(ctx, w.ws.ID, models.RoleViewer, models.NewUser{Email: "out@x.test", Name: "Out", Password: "long enough password"})
				if err != nil {
					t.Fatal(err)
				}
				other, err := db.CreateWorkspace(ctx, "Other team", out.ID)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.RemoveMember(ctx, w.ws.ID, out.ID, false); err != nil {
					t.Fatal(err)
				}
				if _, _, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: w.ws.ID, Kind: models.ShareRun, RunID: w.runs[0].ID, CreatedBy: &sq.ID}); err != nil {
					t.Fatal(err)
				}
				// Make sq the only owner of the workspace.
				ms, err := db.ListMembers(ctx, w.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					if m.Role == models.RoleOwner && m.User.ID != sq.ID {
						if _, err := db.RemoveMember(ctx, w.ws.ID, m.User.ID, false); err != nil {
							t.Fatal(err)
						}
					}
				}

				for _, bad := range []struct{ to, want string }{
					{"", `the only owner of "` + w.ws.Name + `"`},
					{"sq@x.test", "the account being released"},
					{"nobody@x.test", `--transfer-to: no account has the address "nobody@x.test"`},
				} {
					_, err := db.ReleaseAddress(ctx, "sq@x.test", "", bad.to)
					if err == nil || !strings.Contains(err.Error(), bad.want) {
						t.Fatalf("--transfer-to %q: %v, want %q", bad.to, err, bad.want)
					}
					if bad.to == "" && (!errors.Is(err, models.ErrSoleOwner) || !strings.Contains(err.Error(), "--transfer-to EMAIL")) {
						t.Fatalf("the refusal does not say what to do: %v", err)
					}
				}
				if r, err := db.MemberRole(ctx, w.ws.ID, sq.ID); err != nil || r != models.RoleOwner {
					t.Fatalf("a refused release changed the membership: %v %v", r, err)
				}
				if _, err := db.FindUserByEmail(ctx, "sq@x.test"); err != nil {
					t.Fatalf("a refused release renamed the account: %v", err)
				}

				r, err := db.ReleaseAddress(ctx, "sq@x.test", "ticket 9", tc.heir)
				if err != nil {
					t.Fatal(err)
				}
				if r.Shares != 1 || r.TransferredTo != tc.heir || len(r.Transferred) != 1 || r.Transferred[0] != w.ws.Name || len(r.Workspaces) != 1 {
					t.Fatalf("release: %+v", r)
				}
				if _, err := db.MemberRole(ctx, w.ws.ID, sq.ID); models.ErrorCode(err) != models.ENotFound {
					t.Fatalf("the released account is still a member: %v", err)
				}
				heir, err := db.FindUserByEmail(ctx, tc.heir)
				if err != nil {
					t.Fatal(err)
				}
				if role, err := db.MemberRole(ctx, w.ws.ID, heir.ID); err != nil || role != models.RoleOwner {
					t.Fatalf("%s after the transfer: %v %v", tc.heir, role, err)
				}
				if role, err := db.MemberRole(ctx, other.ID, out.ID); err != nil || role != models.RoleOwner {
					t.Fatalf("the heir's own workspace changed: %v %v", role, err)
				}
				links, err := db.ListShareLinks(ctx, w.ws.ID)
				if err != nil || len(links) != 1 || links[0].RevokedAt == nil {
					t.Fatalf("share links after the release: %+v %v", links, err)
				}
				evs, err := db.ListAudit(ctx, w.ws.ID, 0, 2)
				if err != nil || len(evs) != 2 || evs[0].Action != models.AuditAddressReleased || !strings.Contains(evs[0].Detail, "taken out of the workspace") ||
					evs[1].Action != models.AuditMemberRole || evs[1].Target != tc.heir {
					t.Fatalf("audit: %+v %v", evs, err)
				}
			})
		})
	}
}

// TestOperatorResetIsAuditedWithoutAWorkspace: `admin reset-link` for an
// account audits the reset in each of its workspaces; for an account in
// no workspace, which has no workspace audit log, in the accounts' audit
// log, so no operator action goes unrecorded.
func TestOperatorResetIsAuditedWithoutAWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name        string
		inWorkspace bool
	}{
		{"in a workspace", true},
		{"in no workspace", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				ctx := t.Context()
				ws, err := db.EnsureDefaultWorkspace(ctx)
				if err != nil {
					t.Fatal(err)
				}
				u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "lone@x.test", Name: "Lone", Password: "long enough password"})
				if err != nil {
					t.Fatal(err)
				}
				if !tc.inWorkspace {
					if _, err := db.RemoveMember(ctx, ws.ID, u.ID, false); err != nil {
						t.Fatal(err)
					}
				}
				before, err := db.ListAudit(ctx, ws.ID, 0, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := db.OperatorPasswordReset(ctx, "lone@x.test", models.ResetTTL); err != nil {
					t.Fatal(err)
				}
				after, err := db.ListAudit(ctx, ws.ID, 0, 1000)
				if err != nil {
					t.Fatal(err)
				}
				inWS := len(after) - len(before)
				log, err := db.AccountAuditLog(ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if tc.inWorkspace {
					if inWS != 1 || len(log) != 0 {
						t.Fatalf("%d entries in the workspace's audit log and %d in the accounts', want 1 and 0", inWS, len(log))
					}
					return
				}
				if inWS != 0 || len(log) != 1 {
					t.Fatalf("%d entries in the workspace's audit log and %d in the accounts', want 0 and 1", inWS, len(log))
				}
				e := log[0]
				if e.Actor != models.OperatorActor || e.Action != models.AuditResetIssued || e.Target != "lone@x.test" || !strings.Contains(e.Detail, "by the operator") || e.CreatedAt.IsZero() {
					t.Errorf("accounts' audit entry %+v, want the operator's reset of lone@x.test", e)
				}
			})
		})
	}
}
