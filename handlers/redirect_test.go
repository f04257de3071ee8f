package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// browserTarget resolves a Location header the way a browser's URL parser
// does before following it: tabs and line breaks anywhere are dropped,
// leading control characters and spaces are trimmed, and a backslash
// counts as a slash in an http(s) address.
func browserTarget(base *url.URL, location string) (*url.URL, error) {
	cleaned := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, location)
	cleaned = strings.TrimLeft(cleaned, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	cleaned = strings.ReplaceAll(cleaned, `\`, "/")
	ref, err := url.Parse(cleaned)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(ref), nil
}

// TestRedirectsStayOnSite: the way back after signing in (?next=, carried
// by the sign-in form) and after the theme toggle (back=) never leads a
// browser to another site. "/\t/evil.example" passed the old checks and a
// browser, dropping the tab, went to //evil.example.
func TestRedirectsStayOnSite(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		base, _ := url.Parse("http://dash.example/")
		cases := []struct {
			name, target string
			kept         bool // the target is a page of this site and is kept
			// refused: the form is refused (422, no redirect at all), as
			// every form with a control character other than tab and line
			// breaks is (refuseControlCharacters).
			refused bool
		}{
			{"a page", "/runs/3?tab=samples", true, false},
			{"the home page", "/", true, false},
			{"another site", "https://evil.example/", false, false},
			{"scheme-relative", "//evil.example/x", false, false},
			{"backslash", `/\evil.example`, false, false},
			{"tab between slashes", "/\t/evil.example", false, false},
			{"line feed between slashes", "/\n/evil.example", false, false},
			{"carriage return", "/\r/evil.example", false, false},
			{"tab and backslash", "/\t\\evil.example", false, false},
			{"leading tab", "\t//evil.example", false, false},
			{"leading space", " //evil.example", false, false},
			{"javascript", "javascript:alert(1)", false, false},
			{"nul", "/\x00/evil.example", false, true},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// The sign-in page carries ?next= in its form, unchanged
				// only when it is kept.
				page := env.send(http.MethodGet, "/login?next="+url.QueryEscape(tc.target), nil, "").Body.String()
				field := `name="next" value="` + strings.ReplaceAll(tc.target, "&", "&amp;") + `"`
				if tc.kept != strings.Contains(page, field) {
					t.Errorf("sign-in page carries %q: %v, want %v", tc.target, !tc.kept, tc.kept)
				}
				addr := "198.51.100." + itoa(int64(i+1))
				signIn := env.send(http.MethodPost, "/login", url.Values{"email": {"ada@a.test"}, "password": {testPassword},
					"next": {tc.target}}, addr)
				theme := env.send(http.MethodPost, "/theme", url.Values{"theme": {"dark"}, "back": {tc.target}}, "")
				if tc.refused {
					for what, rec := range map[string]*httptest.ResponseRecorder{"sign-in": signIn, "theme": theme} {
						if rec.Code != http.StatusUnprocessableEntity || rec.Header().Get("Location") != "" {
							t.Errorf("%s with %q answered %d to %q, want 422 and no redirect", what, tc.target, rec.Code, rec.Header().Get("Location"))
						}
					}
					return
				}
				for what, rec := range map[string]int{"sign-in": signIn.Code, "theme": theme.Code} {
					if rec != http.StatusSeeOther {
						t.Errorf("%s answered %d, want 303", what, rec)
					}
				}
				for what, loc := range map[string]string{"sign-in": signIn.Header().Get("Location"), "theme": theme.Header().Get("Location")} {
					to, err := browserTarget(base, loc)
					if err != nil || to.Host != base.Host || to.Scheme != base.Scheme {
						t.Errorf("%s with %q redirects to %q, which a browser follows to %v (err %v): another site", what, tc.target, loc, to, err)
					}
					if want := map[bool]string{true: tc.target, false: "/"}[tc.kept]; loc != want {
						t.Errorf("%s with %q redirects to %q, want %q", what, tc.target, loc, want)
					}
				}
			})
		}
	})
}
