package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestTokenAddressesKeepTheirTokenPrivate: an invite's and a password
// reset's pages carry their token in the address, as a share link's do,
// and answer as those do: no-referrer, private no-store and noindex, for
// a live token, an unknown one and the address with a slash added
// (regression: they sent the dashboard's Referrer-Policy: same-origin and
// no X-Robots-Tag, so a crawler that got the link could index it and a
// future link to another site would pass the token on).
func TestTokenAddressesKeepTheirTokenPrivate(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	owner := env.sessionCookie(env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner))
	rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"viewer"}}, "", owner)
	m := onceLinkRE.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil || m[1] != "invites" {
		t.Fatalf("create invite = %d, link %v", rec.Code, m)
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/invites/" + m[2], http.StatusOK},
		{"/invites/" + m[2] + "/", http.StatusNotFound},
		{"/invites/not-a-real-token", http.StatusNotFound},
		{"/reset/not-a-real-token", 0}, // whatever it answers, its headers
	} {
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if tc.want != 0 && rec.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.path, rec.Code, tc.want)
		}
		for name, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "private, no-store", "X-Robots-Tag": "noindex, nofollow"} {
			if got := rec.Header().Get(name); got != want {
				t.Errorf("%s: %s: %q, want %q", tc.path, name, got, want)
			}
		}
	}
}
