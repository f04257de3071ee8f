package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestRemovingMemberOffersToRevokeTheirShareLinks: share links made by a
// member who is removed kept opening their reports, silently, for someone
// who holds their addresses and is no longer in the workspace. The members
// page now counts each member's links that still open and offers, ticked,
// to revoke them with the removal; left open, the message says how many
// and where to revoke them, and the links page marks their maker as no
// longer a member.
func TestRemovingMemberOffersToRevokeTheirShareLinks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		run := env.startRun(env.demoDataset(), "shared run", models.MethodBatchEval, nil)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		oc := env.sessionCookie(owner)
		share := func(by models.User, expires string) {
			t.Helper()
			form := url.Values{"kind": {"run"}, "run_id": {itoa(run.ID)}, "expires": {expires}}
			if rec := env.send(http.MethodPost, "/shares", form, "", env.sessionCookie(by)); rec.Code != http.StatusOK {
				t.Fatalf("share as %s = %d: %.300s", by.Email, rec.Code, rec.Body)
			}
		}
		share(owner, "")
		cases := []struct {
			name    string
			revoke  bool
			message string
		}{
			{"ticked", true, "The 2 share links they made were revoked."},
			{"unticked", false, "2 share links they made still open without an account: revoke them under Share links"},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ed := env.createUser(env.ws.ID, "ed-"+tc.name+"@a.test", models.RoleEditor)
				share(ed, "")
				share(ed, "7d")
				// An expired link opens nothing: not counted, not revoked.
				share(ed, "1d")
				links, _ := env.db.ListShareLinks(ctx, env.ws.ID)
				if err := env.db.Gorm.Model(&models.ShareLink{}).Where("id = ?", links[0].ID).
					Update("expires_at", time.Now().UTC().Add(-time.Hour)).Error; err != nil {
					t.Fatal(err)
				}
				page := env.getAs("/members", oc).Body.String()
				row := page[strings.Index(page, "ed-"+tc.name+"@a.test"):]
				row = row[:strings.Index(row, "</tr>")]
				if !strings.Contains(row, `name="revoke_shares" value="1" checked`) || !strings.Contains(row, "2 share links they made that still open") {
					t.Fatalf("members page row of %s offers no ticked revocation of 2 links: %s", ed.Email, row)
				}
				form := url.Values{}
				if tc.revoke {
					form.Set("revoke_shares", "1")
				}
				rec := env.send(http.MethodPost, "/members/"+itoa(ed.ID)+"/remove", form, "", oc)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("remove = %d: %.300s", rec.Code, rec.Body)
				}
				if msg := flashText(t, rec); !strings.Contains(msg, tc.message) {
					t.Errorf("message %q, want %q", msg, tc.message)
				}
				live, err := env.db.LiveShareLinksByMaker(ctx, env.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]int{true: 0, false: 2}[tc.revoke]
				if live[ed.ID] != want || live[owner.ID] != 1 {
					t.Errorf("links still open: %d of the removed member's (want %d), %d of the owner's (want 1)", live[ed.ID], want, live[owner.ID])
				}
				shares := env.getAs("/shares", oc).Body.String()
				// Each removed editor made three links; the owner's is unmarked.
				if got := strings.Count(shares, `data-testid="share-maker-gone"`); got != 3*(i+1) {
					t.Errorf("links page marks %d links' maker as no longer a member, want %d", got, 3*(i+1))
				}
				if !strings.Contains(shares, "ed-"+tc.name) || !strings.Contains(shares, "(no longer a member)") {
					t.Errorf("the links page does not say who made the links and that they left")
				}
			})
		}
	})
}
