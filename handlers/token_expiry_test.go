package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestTokenExpiryChoice: the tokens form offers 30 days (preselected), 90
// days, 1 year and never (saying it never expires); each choice stores its
// expiry, a form without one gets 30 days, and a choice not on the list is
// refused without making a token.
func TestTokenExpiryChoice(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleViewer)
		as := env.sessionCookie(alice)
		page := env.send(http.MethodGet, "/tokens", nil, "", as).Body.String()
		// The expiry list's options (the access list follows it).
		page = page[strings.Index(page, `id="token-expires"`):]
		page = page[:strings.Index(page, "</select>")]
		opts := regexp.MustCompile(`<option value="([^"]+)"( selected)?>([^<]+)</option>`).FindAllStringSubmatch(page, -1)
		var got []string
		for _, o := range opts {
			got = append(got, o[1]+o[2]+"="+o[3])
		}
		want := []string{"30d selected=30 days", "90d=90 days", "1y=1 year", "never=Never (for automation: it never expires)"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("expiry choices %q, want %q", got, want)
		}

		day := 24 * time.Hour
		tests := []struct {
			expires string
			ttl     time.Duration // 0: never expires
			wording string
		}{
			{"30d", 30 * day, "It expires "},
			{"90d", 90 * day, "It expires "},
			{"1y", 365 * day, "It expires "},
			{"never", 0, "It never expires."},
			{"", 30 * day, "It expires "},
		}
		for _, tc := range tests {
			before := time.Now().UTC()
			form := url.Values{"name": {"script " + tc.expires}}
			if tc.expires != "" {
				form.Set("expires", tc.expires)
			}
			rec := env.send(http.MethodPost, "/tokens", form, "", as)
			after := time.Now().UTC()
			if rec.Code != http.StatusCreated {
				t.Fatalf("%q: POST /tokens = %d: %.300s", tc.expires, rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tc.wording) {
				t.Errorf("%q: the new token's notice lacks %q", tc.expires, tc.wording)
			}
			list, err := env.db.ListAPITokens(t.Context(), env.ws.ID, alice.ID)
			if err != nil || len(list) == 0 {
				t.Fatalf("tokens: %v", err)
			}
			tok := list[0]
			switch {
			case tc.ttl == 0 && tok.ExpiresAt != nil:
				t.Errorf("%q: expires at %v, want never", tc.expires, tok.ExpiresAt)
			case tc.ttl > 0 && (tok.ExpiresAt == nil || tok.ExpiresAt.Before(before.Add(tc.ttl).Add(-time.Second)) || tok.ExpiresAt.After(after.Add(tc.ttl).Add(time.Second))):
				t.Errorf("%q: expires at %v, want %v after %v", tc.expires, tok.ExpiresAt, tc.ttl, before)
			}
		}
		n := len(tests)
		rec := env.send(http.MethodPost, "/tokens", url.Values{"name": {"odd"}, "expires": {"7d"}}, "", as)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "Choose an expiry from the list") {
			t.Errorf("an expiry not on the list = %d: %.300s", rec.Code, rec.Body)
		}
		if list, _ := env.db.ListAPITokens(t.Context(), env.ws.ID, alice.ID); len(list) != n {
			t.Errorf("%d tokens after a refused expiry, want %d", len(list), n)
		}
		// A refused name keeps the chosen expiry selected.
		rec = env.send(http.MethodPost, "/tokens", url.Values{"name": {" "}, "expires": {"1y"}}, "", as)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `<option value="1y" selected>`) {
			t.Errorf("a refused name loses the chosen expiry: %d", rec.Code)
		}
	})
}

// TestExpiredTokenRefused: a token works through the API before its
// expiry, and its answer carries expires_at; once its expiry is past
// (expires_at moved into the past in the database) it gets 401 saying the
// day it expired and to make a new one on the tokens page, while a token
// that never expires keeps working and lists expires_at null.
func TestExpiredTokenRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleEditor)
		as := env.sessionCookie(alice)
		token, id := env.tokenFromPage(as, "nightly")
		rec := env.send(http.MethodPost, "/tokens", url.Values{"name": {"automation"}, "expires": {"never"}}, "", as)
		if rec.Code != http.StatusCreated {
			t.Fatalf("never-expiring token: %d", rec.Code)
		}
		never := regexp.MustCompile(`class="once-link">(bev_[A-Za-z0-9_-]+)<`).FindStringSubmatch(rec.Body.String())[1]

		stored, err := env.db.ListAPITokens(t.Context(), env.ws.ID, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]models.APIToken{}
		for _, s := range stored {
			byID[s.ID] = s
		}
		list := decode[Page[APIToken]](t, a.get("/api/v1/tokens", token), http.StatusOK)
		if len(list.Items) != 2 {
			t.Fatalf("%d tokens listed, want 2", len(list.Items))
		}
		for _, it := range list.Items {
			s := byID[it.ID]
			switch {
			case it.ID == id && (it.ExpiresAt == nil || s.ExpiresAt == nil || it.ExpiresAt.Time().Sub(*s.ExpiresAt).Abs() > time.Millisecond):
				t.Errorf("the 30-day token lists expires_at %v, stored %v", it.ExpiresAt, s.ExpiresAt)
			case it.ID != id && it.ExpiresAt != nil:
				t.Errorf("the never-expiring token lists expires_at %v, want null", it.ExpiresAt)
			}
		}
		// The raw answer names the field even when it is null.
		if body := a.get("/api/v1/tokens", never).Body.String(); !strings.Contains(body, `"expires_at":null`) {
			t.Errorf("the list does not carry expires_at null for the never-expiring token: %.400s", body)
		}

		past := time.Now().UTC().Add(-33 * 24 * time.Hour)
		if err := env.db.Gorm.Model(&models.APIToken{}).Where("id = ?", id).Update("expires_at", past).Error; err != nil {
			t.Fatal(err)
		}
		rec = a.get("/api/v1/projects", token)
		if rec.Code != http.StatusUnauthorized || errorCode(t, rec) != models.EUnauthorized {
			t.Fatalf("an expired token = %d: %.300s", rec.Code, rec.Body)
		}
		var e APIError
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if wantDay := "expired on " + past.Format("2006-01-02"); !strings.Contains(e.Error.Message, wantDay) || !strings.Contains(e.Error.Message, "API tokens page") {
			t.Errorf("an expired token's message %q does not say %q and where to make a new one", e.Error.Message, wantDay)
		}
		if rec := a.get("/api/v1/projects", never); rec.Code != http.StatusOK {
			t.Errorf("a never-expiring token = %d after the other expired", rec.Code)
		}
		// Moved back before its expiry, the same token works again: the
		// refusal is the expiry's, not something else's.
		if err := env.db.Gorm.Model(&models.APIToken{}).Where("id = ?", id).Update("expires_at", time.Now().UTC().Add(time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		if rec := a.get("/api/v1/projects", token); rec.Code != http.StatusOK {
			t.Errorf("a token an hour before its expiry = %d", rec.Code)
		}
	})
}

// TestTokensListExpiryWording: the tokens list says "expires <date>",
// "expired <date>" or "never expires" for each token, the owner's list of
// members' tokens too.
func TestTokensListExpiryWording(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleViewer)
		bob := env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		as := env.sessionCookie(alice)
		for _, f := range []url.Values{
			{"name": {"live"}, "expires": {"90d"}},
			{"name": {"old"}, "expires": {"30d"}},
			{"name": {"forever"}, "expires": {"never"}},
		} {
			if rec := env.send(http.MethodPost, "/tokens", f, "", as); rec.Code != http.StatusCreated {
				t.Fatalf("POST /tokens %v = %d", f, rec.Code)
			}
		}
		future := time.Now().UTC().Add(90 * 24 * time.Hour)
		past := time.Now().UTC().Add(-3 * 24 * time.Hour)
		if err := env.db.Gorm.Model(&models.APIToken{}).Where("name = ?", "old").Update("expires_at", past).Error; err != nil {
			t.Fatal(err)
		}
		cells := regexp.MustCompile(`<td>(live|old|forever)</td>.*?<td data-testid="token-expiry">([^<]*)</td>`)
		got := map[string]string{}
		for _, m := range cells.FindAllStringSubmatch(env.send(http.MethodGet, "/tokens", nil, "", as).Body.String(), -1) {
			got[m[1]] = m[2]
		}
		want := map[string]string{
			"live":    "expires " + future.Format("2006-01-02"),
			"old":     "expired " + past.Format("2006-01-02"),
			"forever": "never expires",
		}
		for name, w := range want {
			// A token made just before midnight may say the next day.
			if got[name] != w && !(name == "live" && got[name] == "expires "+future.Add(-time.Minute).Format("2006-01-02")) {
				t.Errorf("%s: the list says %q, want %q", name, got[name], w)
			}
		}
		owner := env.send(http.MethodGet, "/tokens", nil, "", env.sessionCookie(bob)).Body.String()
		for _, w := range []string{want["old"], "never expires"} {
			if !strings.Contains(owner, "<td>"+w+"</td>") {
				t.Errorf("the owner's list of members' tokens lacks %q", w)
			}
		}
	})
}

// TestExpiringTokensPointedOut: a token that stops working within a week
// is pointed out to its owner on the home page (its name escaped) and
// worded "in N days" in the list; every API answer to an expiring token
// carries its expiry, and none to a token that never expires.
func TestExpiringTokensPointedOut(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		a := newAPIClient(t, env)
		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleEditor)
		bob := env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		as := env.sessionCookie(alice)
		soonTok, soonID := env.tokenFromPage(as, "<b>nightly</b>")
		_, laterID := env.tokenFromPage(as, "weekly")
		_, pastID := env.tokenFromPage(as, "old")
		_, revokedID := env.tokenFromPage(as, "revoked")
		rec := env.send(http.MethodPost, "/tokens", url.Values{"name": {"automation"}, "expires": {"never"}}, "", as)
		never := regexp.MustCompile(`class="once-link">(bev_[A-Za-z0-9_-]+)<`).FindStringSubmatch(rec.Body.String())[1]

		now := time.Now().UTC()
		set := func(id int64, col string, at time.Time) {
			t.Helper()
			if err := env.db.Gorm.Model(&models.APIToken{}).Where("id = ?", id).Update(col, at).Error; err != nil {
				t.Fatal(err)
			}
		}
		soon := now.Add(3*24*time.Hour + time.Hour)
		set(soonID, "expires_at", soon)
		set(laterID, "expires_at", now.Add(10*24*time.Hour))
		set(pastID, "expires_at", now.Add(-time.Hour))
		set(revokedID, "expires_at", now.Add(2*24*time.Hour))
		set(revokedID, "revoked_at", now)

		home := env.send(http.MethodGet, "/", nil, "", as).Body.String()
		notice := regexp.MustCompile(`(?s)<div class="flash warning" data-testid="expiring-tokens">(.*?)</div>`).FindStringSubmatch(home)
		if notice == nil {
			t.Fatalf("the home page does not point out the token expiring in 3 days")
		}
		for _, w := range []string{"&lt;b&gt;nightly&lt;/b&gt;", "expires " + soon.Format("2006-01-02") + ", in 3 days", `href="/tokens"`} {
			if !strings.Contains(notice[1], w) {
				t.Errorf("the notice lacks %q: %s", w, notice[1])
			}
		}
		for _, w := range []string{"weekly", "old", "revoked", "automation", "<b>nightly"} {
			if strings.Contains(notice[1], w) {
				t.Errorf("the notice names %q: %s", w, notice[1])
			}
		}
		// Another member's home page says nothing of alice's tokens.
		if strings.Contains(env.send(http.MethodGet, "/", nil, "", env.sessionCookie(bob)).Body.String(), "expiring-tokens") {
			t.Errorf("bob's home page points out alice's token")
		}
		list := env.send(http.MethodGet, "/tokens", nil, "", as).Body.String()
		if !strings.Contains(list, "expires "+soon.Format("2006-01-02")+", in 3 days") {
			t.Errorf("the tokens list does not say how soon the token expires")
		}

		got := a.get("/api/v1/projects", soonTok)
		if h := got.Header().Get(TokenExpiresHeader); h != soon.Format(time.RFC3339) {
			t.Errorf("%s = %q, want %q", TokenExpiresHeader, h, soon.Format(time.RFC3339))
		}
		if h := a.get("/api/v1/projects", never).Header().Get(TokenExpiresHeader); h != "" {
			t.Errorf("a token that never expires is answered with %s %q", TokenExpiresHeader, h)
		}
	})
}
