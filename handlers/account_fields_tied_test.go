package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// The account page's forms say a refusal beside the field it is about,
// through the shared field markup (web/form_errors.templ): the input is
// aria-invalid and its aria-describedby names the message's element. The
// new workspace's refused name was one line above its form, tied to
// nothing, and the name typed was lost; the display name's message had its
// own markup. What was typed is kept, escaped, and nothing is made.
func TestAccountPageFieldErrorsTiedToInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		here := env.sessionCookie(ada)
		const hostile = `<b>Team</b> & "co"`
		tests := []struct {
			name, path, typed string
			field, want       string
		}{
			{"workspace name empty", "/workspaces", "   ", "ws-name", "a workspace needs a name"},
			{"workspace name on two lines", "/workspaces", hostile + "\nB", "ws-name", "the workspace name holds a line break"},
			{"workspace name too long", "/workspaces", strings.Repeat("w", models.MaxNameLength+1), "ws-name",
				fmt.Sprintf("is %d characters long; the limit is %d", models.MaxNameLength+1, models.MaxNameLength)},
			{"display name on two lines", "/account/name", hostile + "\nB", "display_name", "holds a line break"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before, err := env.db.ListUserWorkspaces(ctx, ada.ID)
				must(t, err)
				rec := env.send(http.MethodPost, tc.path, url.Values{"name": {tc.typed}}, "192.0.2.9", here)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				checkFieldTied(t, body, tc.field, tc.want)
				if n := strings.Count(body, `aria-invalid="true"`); n != 1 {
					t.Errorf("%d inputs marked invalid, want 1", n)
				}
				if strings.Contains(body, "<b>Team</b>") {
					t.Errorf("the typed name is on the page raw")
				}
				if strings.TrimSpace(tc.typed) != "" && !strings.Contains(openingTag(body, tc.field), `value="`+html.EscapeString(tc.typed)+`"`) {
					t.Errorf("the typed name is not kept: %s", openingTag(body, tc.field))
				}
				after, err := env.db.ListUserWorkspaces(ctx, ada.ID)
				must(t, err)
				if len(after) != len(before) {
					t.Errorf("workspaces = %d after a refusal, want %d", len(after), len(before))
				}
				if got := mustUser(t, env, ada.ID).Name; got != ada.Name {
					t.Errorf("the display name changed to %q", got)
				}
			})
		}
	})
}

// "Forgot password?" says an address it cannot read beside the address
// field, tied to it, keeping what was typed (escaped); it said it above
// the form, tied to nothing. Nothing is mailed.
func TestForgotAddressErrorTiedToInput(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		for _, typed := range []string{"ada", `<i>ada</i> at home`, strings.Repeat("a", maxLoginFieldLength) + "@a.test"} {
			rec := env.send(http.MethodPost, "/forgot", url.Values{"email": {typed}}, "198.51.100.7")
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%.20q: status %d, want 422", typed, rec.Code)
			}
			body := rec.Body.String()
			checkFieldTied(t, body, "email", "Type your account's address, like ada@example.com.")
			if strings.Contains(body, "<i>ada</i>") {
				t.Errorf("the typed address is on the page raw")
			}
			if !strings.Contains(openingTag(body, "email"), `value="`+html.EscapeString(typed)+`"`) {
				t.Errorf("%.20q: the typed address is not kept: %.300s", typed, openingTag(body, "email"))
			}
		}
		if got := smtpd.Messages(); len(got) != 0 {
			t.Errorf("%d mails sent for unreadable addresses", len(got))
		}
	})
}

// With mail, the invite page asks only for an address: one it refuses is
// said beside the address field, tied to it, kept as typed (escaped), and
// nothing is mailed. It was said above the form, tied to nothing.
func TestInviteByMailAddressErrorTiedToInput(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, token, err := env.db.CreateInvite(context.Background(), env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
		must(t, err)
		for _, tc := range []struct{ typed, want string }{
			{"ada", `"ada" is not an email address`},
			{`<b>ada</b>@a.test`, "is not an email address"},
			{"ada@" + models.ReleasedDomain, "is a placeholder address, not one that receives mail"},
		} {
			rec := env.send(http.MethodPost, "/invites/"+token, url.Values{"email": {tc.typed}}, "198.51.100.8")
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%q: status %d, want 422", tc.typed, rec.Code)
			}
			body := rec.Body.String()
			checkFieldTied(t, body, "email", tc.want)
			if strings.Contains(body, `data-testid="form-error"`) {
				t.Errorf("%q: the address's refusal is above the form too", tc.typed)
			}
			if strings.Contains(body, "<b>ada</b>") {
				t.Errorf("the typed address is on the page raw")
			}
			if !strings.Contains(openingTag(body, "email"), `value="`+html.EscapeString(tc.typed)+`"`) {
				t.Errorf("%q: the typed address is not kept: %s", tc.typed, openingTag(body, "email"))
			}
		}
		if got := smtpd.Messages(); len(got) != 0 {
			t.Errorf("%d mails sent for refused addresses", len(got))
		}
	})
}

// Members, with mail: an invite to an address it refuses says so beside
// the address field, tied to it, keeping the address (escaped); no invite
// is made and nothing is mailed. It was a line at the top of the page.
func TestMembersInviteAddressErrorTiedToInput(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		here := env.sessionCookie(owner)
		for _, tc := range []struct{ typed, want string }{
			{"ada", `"ada" is not an email address.`},
			{`<b>ada</b>@a.test`, "is not an email address."},
			{"ada@" + models.ReleasedDomain, "is a placeholder address, not one that receives mail."},
		} {
			rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}, "email": {tc.typed}}, "198.51.100.9", here)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("%q: status %d, want 422", tc.typed, rec.Code)
			}
			body := rec.Body.String()
			checkFieldTied(t, body, "invite-email", tc.want)
			if strings.Contains(body, `data-testid="form-error"`) {
				t.Errorf("%q: the address's refusal is at the top too", tc.typed)
			}
			if strings.Contains(body, "<b>ada</b>") {
				t.Errorf("the typed address is on the page raw")
			}
			if !strings.Contains(openingTag(body, "invite-email"), `value="`+html.EscapeString(tc.typed)+`"`) {
				t.Errorf("%q: the typed address is not kept: %s", tc.typed, openingTag(body, "invite-email"))
			}
		}
		invs, err := env.db.ListOpenInvites(context.Background(), env.ws.ID)
		must(t, err)
		if len(invs) != 0 {
			t.Errorf("%d invites made from refused addresses", len(invs))
		}
		if got := smtpd.Messages(); len(got) != 0 {
			t.Errorf("%d mails sent for refused addresses", len(got))
		}
	})
}
