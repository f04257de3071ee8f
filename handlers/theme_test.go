package handlers

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestThemeToggle: the header's toggle works without script: a form post
// stores the theme in a cookie and returns to the page it came from, which
// then carries the theme; it never redirects off the site.
func TestThemeToggle(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name, theme, back string
			wantTo            string
			wantCookie        string // "" clears the cookie
			wantAttr          string // on <html>; "" for none
		}{
			{"dark", "dark", "/judges?x=1", "/judges?x=1", "dark", `data-theme="dark"`},
			{"light", "light", "/runs", "/runs", "light", `data-theme="light"`},
			{"system", "", "/", "/", "", ""},
			{"unknown theme is the system's", "purple", "/", "/", "", ""},
			{"another site", "dark", "https://evil.example/", "/", "dark", `data-theme="dark"`},
			{"scheme-relative", "dark", "//evil.example/x", "/", "dark", `data-theme="dark"`},
			{"backslash trick", "dark", `/\evil.example`, "/", "dark", `data-theme="dark"`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.send(http.MethodPost, "/theme", url.Values{"theme": {tc.theme}, "back": {tc.back}}, "")
				if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.wantTo {
					t.Fatalf("status %d to %q, want 303 to %q", rec.Code, rec.Header().Get("Location"), tc.wantTo)
				}
				var ck *http.Cookie
				for _, c := range rec.Result().Cookies() {
					if c.Name == "theme" {
						ck = c
					}
				}
				if ck == nil {
					t.Fatal("no theme cookie set")
				}
				if tc.wantCookie == "" {
					if ck.MaxAge >= 0 {
						t.Errorf("cookie %+v, want it cleared", ck)
					}
					ck = nil
				} else if ck.Value != tc.wantCookie {
					t.Errorf("cookie value %q, want %q", ck.Value, tc.wantCookie)
				}
				page := env.send(http.MethodGet, "/judges", nil, "", ck).Body.String()
				html := page[strings.Index(page, "<html"):]
				html = html[:strings.Index(html, ">")]
				if tc.wantAttr == "" && strings.Contains(html, "data-theme") || tc.wantAttr != "" && !strings.Contains(html, tc.wantAttr) {
					t.Errorf("<html> tag %q, want %q", html, tc.wantAttr)
				}
				// The toggle names the current theme and offers the next.
				if !strings.Contains(page, `data-testid="theme-toggle"`) || !strings.Contains(page, `name="back" value="/judges"`) {
					t.Errorf("page has no theme toggle returning to itself")
				}
			})
		}
	})
}

func TestFavicon(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rec := env.get("/favicon.ico")
		if rec.Code != http.StatusOK {
			t.Fatalf("favicon: status %d", rec.Code)
		}
		b := rec.Body.Bytes()
		// An ICO file: reserved 0, type 1, at least one image.
		if len(b) < 22 || b[0] != 0 || b[1] != 0 || b[2] != 1 || b[3] != 0 || b[4] == 0 {
			t.Errorf("favicon is not an ICO file (% x)", b[:min(len(b), 8)])
		}
		if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, "icon") {
			t.Errorf("favicon content type %q", ct)
		}
	})
}

// TestThemeToggleAfterFormPost: a page rendered in answer to a form post
// (an invite link shown once, a form shown again with its error) lives at
// an address that answers only POST, so its toggle returns to the page the
// form was on (or home), never to the post's address, which would answer
// 405 Method Not Allowed.
func TestThemeToggleAfterFormPost(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		cases := []struct {
			name, path, referer string
			form                url.Values
			wantBack            string
		}{
			{"invite link shown once", "/members/invites", "http://example.com/members", url.Values{"role": {"viewer"}}, "/members"},
			{"form shown again", "/projects", "http://example.com/?show=all", url.Values{"name": {""}}, "/?show=all"},
			{"no referer", "/members/invites", "", url.Values{"role": {"viewer"}}, "/"},
			{"referer of another site", "/members/invites", "https://evil.example/members", url.Values{"role": {"viewer"}}, "/"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if tc.referer != "" {
					req.Header.Set("Referer", tc.referer)
				}
				req.AddCookie(owner)
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				if rec.Code == http.StatusSeeOther {
					t.Fatalf("%s redirected to %q; the case needs a page rendered by the post", tc.path, rec.Header().Get("Location"))
				}
				want := `name="back" value="` + html.EscapeString(tc.wantBack) + `"`
				if body := rec.Body.String(); !strings.Contains(body, want) {
					t.Errorf("status %d: the theme toggle should carry %s:\n%s", rec.Code, want, body)
				}
				if got := env.send(http.MethodGet, tc.wantBack, nil, "", owner).Code; got != http.StatusOK {
					t.Errorf("GET %s answers %d", tc.wantBack, got)
				}
			})
		}
	})
}
