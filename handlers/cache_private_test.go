package handlers

import (
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestPrivatePagesAreNotStored: what a signed-in person is shown is sent
// with "no-store", so a shared computer's browser cache does not keep it
// after sign-out; the site's own files stay cacheable, and so do pages
// that hold nothing private.
func TestPrivatePagesAreNotStored(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleViewer)
		as := env.sessionCookie(alice)
		for _, c := range []struct {
			path     string
			signedIn bool
			want     string
		}{
			{"/", true, "private, no-store"},
			{"/account", true, "private, no-store"},
			{"/static/app.css", true, ""}, // unhashed: revalidated as before, not kept off disk
			{"/signin", false, ""},
			{"/reset/not-a-real-token", false, "private, no-store"},
			{"/invites/not-a-real-token", false, "private, no-store"},
		} {
			rec := env.getAs(c.path)
			if c.signedIn {
				rec = env.getAs(c.path, as)
			}
			if got := rec.Header().Get("Cache-Control"); got != c.want {
				t.Errorf("GET %s (signed in %v): %d, Cache-Control %q, want %q", c.path, c.signedIn, rec.Code, got, c.want)
			}
		}
	})
}
