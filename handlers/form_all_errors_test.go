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

// TestAccountFormsShowEveryProblem (forms45): the invite sign-up form
// showed only its first problem (a bad address) and not the too-short
// password beside it; the first-owner setup, the mailed link's sign-up and
// the password change stopped at the first too. Each account form now
// shows every field's problem at once, each beside its field (its
// field-error, the input marked invalid and pointing at it), keeps what was
// typed (escaped) except passwords, and makes nothing.
func TestAccountFormsShowEveryProblem(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const badEmail = `<b>ada</b>`
		type check struct {
			field, message string
		}
		post := func(path string, form url.Values, cookies ...*http.Cookie) (int, string) {
			rec := env.send(http.MethodPost, path, form, "", cookies...)
			return rec.Code, rec.Body.String()
		}
		expect := func(t *testing.T, status int, body string, want []check, kept []string, typedPasswords ...string) {
			t.Helper()
			if status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422:\n%.1500s", status, body)
			}
			for _, w := range want {
				tag := `data-testid="field-error-` + w.field + `">`
				i := strings.Index(body, tag)
				if i < 0 {
					t.Errorf("no message beside %s (want %q)", w.field, w.message)
					continue
				}
				if msg := body[i+len(tag) : i+strings.Index(body[i:], "</p>")]; !strings.Contains(msg, w.message) {
					t.Errorf("beside %s: %q, want %q", w.field, msg, w.message)
				}
				if !strings.Contains(body, `id="`+w.field+`"`) || !strings.Contains(body, `aria-describedby="`+w.field+`-error"`) {
					t.Errorf("the %s input is not tied to its message", w.field)
				}
			}
			if n := strings.Count(body, `data-testid="field-error-`); n != len(want) {
				t.Errorf("%d field messages shown, want %d", n, len(want))
			}
			for _, k := range kept {
				if !strings.Contains(body, k) {
					t.Errorf("what was typed is not kept: no %s", k)
				}
			}
			if strings.Contains(body, badEmail) {
				t.Errorf("the typed address is shown unescaped")
			}
			for _, pw := range typedPasswords {
				if strings.Contains(body, pw) {
					t.Errorf("a typed password %q is shown again", pw)
				}
			}
		}

		t.Run("first-owner setup", func(t *testing.T) {
			status, body := post("/setup", url.Values{"email": {badEmail}, "name": {"Ada Lovelace"}, "password": {"shortpw"}})
			expect(t, status, body, []check{{"email", "is not an email address"}, {"password", "at least 10 characters"}},
				[]string{`value="Ada Lovelace"`, `value="&lt;b&gt;ada&lt;/b&gt;"`}, "shortpw")
			if _, err := env.db.FindUserByEmail(ctx, "<b>ada</b>"); models.ErrorCode(err) != models.ENotFound {
				t.Errorf("a refused setup made an account: %v", err)
			}
		})

		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, token, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("invite sign-up", func(t *testing.T) {
			status, body := post("/invites/"+token, url.Values{"email": {badEmail}, "name": {" "}, "password": {"shortpw"}})
			expect(t, status, body, []check{{"email", "is not an email address"}, {"name", "A name is needed"}, {"password", "at least 10 characters"}},
				[]string{`value="&lt;b&gt;ada&lt;/b&gt;"`}, "shortpw")
			status, body = post("/invites/"+token, url.Values{"email": {"cleo@a.test"}, "name": {"Cleo"}, "password": {"shortpw"}})
			expect(t, status, body, []check{{"password", "at least 10 characters"}}, []string{`value="cleo@a.test"`, `value="Cleo"`}, "shortpw")
			// The invite is still open: nothing was taken.
			if _, _, err := env.db.FindOpenInvite(ctx, token, 0); err != nil {
				t.Errorf("a refused answer used the invite: %v", err)
			}
		})

		t.Run("mailed link sign-up", func(t *testing.T) {
			_, inv, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			_, link, err := env.db.AnswerInviteByMail(ctx, inv, "dora@a.test")
			if err != nil {
				t.Fatal(err)
			}
			status, body := post("/confirm/"+link, url.Values{"name": {"Do\nra"}, "password": {"shortpw"}})
			expect(t, status, body, []check{{"name", "line"}, {"password", "at least 10 characters"}}, nil, "shortpw")
		})

		t.Run("password reset", func(t *testing.T) {
			ed := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
			_, link, err := env.db.CreatePasswordReset(ctx, owner.ID, ed.ID, models.ResetTTL)
			if err != nil {
				t.Fatal(err)
			}
			status, body := post("/reset/"+link, url.Values{"password": {"shortpw"}})
			expect(t, status, body, []check{{"password", "at least 10 characters"}}, nil, "shortpw")
		})

		t.Run("password change", func(t *testing.T) {
			me := env.sessionCookie(owner)
			status, body := post("/account/password", url.Values{"current_password": {""}, "new_password": {"shortpw"}, "new_password_again": {"other"}}, me)
			expect(t, status, body, []check{{"current_password", "Type your current password"}, {"new_password", "at least 10 characters"}}, nil, "shortpw")
			status, body = post("/account/password", url.Values{"current_password": {""}, "new_password": {"a long new passphrase"}, "new_password_again": {"a long new passfrase"}}, me)
			expect(t, status, body, []check{{"current_password", "Type your current password"}, {"new_password_again", "differ"}}, nil, "a long new pass")
		})
	})
}
