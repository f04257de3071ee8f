package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAnsweredInviteIsNotListedAsOpen: an invite answered with the address
// of an existing account is listed on Members as answered by that address,
// waiting for it to sign in, not as open to whoever has the link; once
// the account joins, it leaves the list. Regression: such an invite was
// listed exactly like an unused one, although it opens for nobody else.
func TestAnsweredInviteIsNotListedAsOpen(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		ada, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleViewer, models.NewUser{Email: "ada@a.test", Name: "Ada", Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.db.CreateWorkspace(ctx, "Ada's", ada.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := env.db.RemoveMember(ctx, env.ws.ID, ada.ID, false); err != nil {
			t.Fatal(err)
		}
		_, answered, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, owner.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
		f := url.Values{"email": {"Ada@a.test"}, "name": {"Someone"}, "password": {"whatever they typed"}}
		if rec := env.send(http.MethodPost, "/invites/"+answered, f, "192.0.2.9"); rec.Code != http.StatusSeeOther {
			t.Fatalf("answer: status %d", rec.Code)
		}
		states := func() []string {
			t.Helper()
			rec := env.send(http.MethodGet, "/members", nil, "", env.sessionCookie(owner))
			if rec.Code != http.StatusOK {
				t.Fatalf("members: status %d", rec.Code)
			}
			var out []string
			for _, part := range strings.Split(rec.Body.String(), `data-testid="invite-state">`)[1:] {
				cell, _, _ := strings.Cut(part, "</td>")
				out = append(out, strings.Join(strings.Fields(cell), " "))
			}
			return out
		}
		got := states()
		if len(got) != 2 {
			t.Fatalf("invite states = %q, want two", got)
		}
		// Newest first: the viewer invite, open; then the answered one.
		if !strings.HasPrefix(got[0], "open") {
			t.Errorf("unused invite's state = %q, want open", got[0])
		}
		if !strings.HasPrefix(got[1], "answered by ada@a.test") || strings.Contains(got[1], "open:") {
			t.Errorf("answered invite's state = %q, want answered by ada@a.test", got[1])
		}
		// Ada signs in and joins: the invite is used and leaves the list.
		if rec := env.send(http.MethodPost, "/invites/"+answered, nil, "", env.sessionCookie(ada)); rec.Code != http.StatusSeeOther {
			t.Fatalf("join: status %d", rec.Code)
		}
		if got := states(); len(got) != 1 || !strings.HasPrefix(got[0], "open") {
			t.Errorf("after ada joined, invite states = %q, want the open one alone", got)
		}
	})
}
