package handlers

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// flashOf is the text of the flash message a response set ("" if none).
func flashOf(rec *httptest.ResponseRecorder) string {
	for _, c := range rec.Result().Cookies() {
		if c.Name != flashCookie || c.Value == "" {
			continue
		}
		_, enc, _ := strings.Cut(c.Value, ":")
		b, err := base64.RawURLEncoding.DecodeString(enc)
		if err == nil {
			return string(b)
		}
	}
	return ""
}

// TestInviteAnswerSaysNothingOfExistingAccounts: the holder of an invite
// link, not signed in, cannot tell from the answer whether an address has
// an account. An address with an account and one without get the same
// status, address, words and cookies, and the link then answers both the
// same way (to anyone but the account). The person who owns the address
// proves it by signing in: a new account finds it has joined, an existing
// one joins with its own password, and nobody else can use the link. (QA:
// the form answered "an account with the address ... already exists" (422)
// for any address typed, as often as asked, while a free address made an
// account and signed it in.)
func TestInviteAnswerSaysNothingOfExistingAccounts(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		// An account of another workspace, unknown to this workspace.
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
		invite := func() string {
			t.Helper()
			_, token, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return token
		}
		// What a response shows, with the link's token and the address typed
		// written alike.
		type answer struct {
			status                         int
			location, flash, body, cookies string
		}
		seen := func(rec *httptest.ResponseRecorder, token, email string) answer {
			plain := func(s string) string {
				s = strings.ReplaceAll(s, token, "TOKEN")
				s = strings.ReplaceAll(s, url.QueryEscape(token), "TOKEN")
				return strings.ReplaceAll(s, email, "EMAIL")
			}
			var names []string
			for _, c := range rec.Result().Cookies() {
				names = append(names, c.Name)
			}
			return answer{status: rec.Code, location: plain(rec.Header().Get("Location")), flash: plain(flashOf(rec)),
				body: plain(rec.Body.String()), cookies: strings.Join(names, ",")}
		}
		taken, free := invite(), invite()
		// A wrong password for the existing account, and the one it has.
		for _, password := range []string{"not ada's password at all", testPassword} {
			takenTok, freeTok := invite(), invite()
			if password == "not ada's password at all" {
				takenTok, freeTok = taken, free
			}
			join := func(token, email string) answer {
				f := url.Values{"email": {email}, "name": {"Someone"}, "password": {password}}
				return seen(env.send(http.MethodPost, "/invites/"+token, f, "192.0.2.9"), token, email)
			}
			newEmail := "new" + itoa(int64(len(password))) + "@a.test"
			a, b := join(takenTok, "ada@a.test"), join(freeTok, newEmail)
			if a != b {
				t.Errorf("password %q: the answers differ:\n has an account: %+v\n has none:       %+v", password, a, b)
			}
			if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/login?next=") || !strings.Contains(a.flash, "sign in as EMAIL") {
				t.Errorf("answer = %d to %q (%q), want 303 to the sign-in page saying to sign in as the address", a.status, a.location, a.flash)
			}
			// The link afterwards: the same to its holder, and to another account.
			for _, signedIn := range []bool{false, true} {
				// A fresh session each (a session's first request renews its cookie).
				as := func() *http.Cookie {
					if signedIn {
						return env.sessionCookie(owner)
					}
					return nil
				}
				pa := env.send(http.MethodGet, "/invites/"+takenTok, nil, "", as())
				pb := env.send(http.MethodGet, "/invites/"+freeTok, nil, "", as())
				if seen(pa, takenTok, "ada@a.test") != seen(pb, freeTok, newEmail) || pa.Code != http.StatusNotFound {
					t.Errorf("password %q, signed in %v: the link then answers %d and %d, want the same 404\n%+v\n%+v", password, signedIn, pa.Code, pb.Code, seen(pa, takenTok, "ada@a.test"), seen(pb, freeTok, newEmail))
				}
				again := url.Values{"email": {"third@a.test"}, "name": {"Third"}, "password": {testPassword}}
				ra := env.send(http.MethodPost, "/invites/"+takenTok, again, "")
				rb := env.send(http.MethodPost, "/invites/"+freeTok, again, "")
				if ra.Code != http.StatusNotFound || rb.Code != http.StatusNotFound {
					t.Errorf("password %q: a second answer = %d and %d, want 404 for both", password, ra.Code, rb.Code)
				}
			}
			if _, err := env.db.FindUserByEmail(ctx, "third@a.test"); err == nil {
				t.Errorf("a second answer made an account")
			}
		}
		// Nothing about the existing account changed: its password still
		// works, and it has not joined.
		if u, err := env.db.Authenticate(ctx, "ada@a.test", testPassword); err != nil || u.Name != "Ada" {
			t.Errorf("ada's account changed: %v %q", err, u.Name)
		}
		if _, err := env.db.MemberRole(ctx, env.ws.ID, ada.ID); err == nil {
			t.Errorf("ada joined without signing in")
		}

		// Proving it: the new account signs in and comes back to the link.
		signIn := func(email, password, next string) *http.Cookie {
			t.Helper()
			rec := env.send(http.MethodPost, "/login", url.Values{"email": {email}, "password": {password}, "next": {next}}, "198.51.100.8")
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != next {
				t.Fatalf("sign in as %s = %d to %q, want 303 to %s", email, rec.Code, rec.Header().Get("Location"), next)
			}
			return env.sessionFrom(rec)
		}
		newcomer := signIn("new25@a.test", "not ada's password at all", "/invites/"+free)
		rec := env.send(http.MethodGet, "/invites/"+free, nil, "", newcomer)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" || !strings.Contains(flashOf(rec), "you joined") {
			t.Errorf("new account back at the link = %d to %q (%q), want 303 home saying it joined", rec.Code, rec.Header().Get("Location"), flashOf(rec))
		}
		nu, err := env.db.FindUserByEmail(ctx, "new25@a.test")
		if err != nil {
			t.Fatal(err)
		}
		if role, err := env.db.MemberRole(ctx, env.ws.ID, nu.ID); err != nil || role != models.RoleEditor {
			t.Errorf("the new account's role = %q (%v), want editor", role, err)
		}
		// The existing account signs in with its own password and joins.
		adaIn := signIn("ada@a.test", testPassword, "/invites/"+taken)
		page := env.send(http.MethodGet, "/invites/"+taken, nil, "", adaIn)
		if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "Join the workspace") {
			t.Fatalf("ada back at the link = %d, want 200 with the join button", page.Code)
		}
		if rec := env.send(http.MethodPost, "/invites/"+taken, nil, "", adaIn); rec.Code != http.StatusSeeOther {
			t.Fatalf("ada joins = %d: %.300s", rec.Code, rec.Body)
		}
		if role, err := env.db.MemberRole(ctx, env.ws.ID, ada.ID); err != nil || role != models.RoleEditor {
			t.Errorf("ada's role = %q (%v), want editor", role, err)
		}
		if acts := env.auditActions(); !hasAction(acts, models.AuditMemberJoined) {
			t.Errorf("audit log lacks the joins: %v", acts)
		}
	})
}
