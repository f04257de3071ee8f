package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestChangeOwnDisplayName (rename44): a signed-in person changes their
// own display name on their account page, beside the password. A refused
// name (empty, too long, a line break or another control character) shows
// the form again with the name as typed, escaped, and the reason beside
// the field, and changes nothing; a cross-site post is refused. A change
// shows at once in the header, on Members and in the flash (quoted as
// typed), and is written to the audit log with the old and new name; the
// same name again writes nothing. There was no way to change one's name
// in the app at all.
func TestChangeOwnDisplayName(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// The local user (no account yet) has no name to change.
		if rec := env.postForm("/account/name", url.Values{"name": {"Local"}}); rec.Code != http.StatusUnprocessableEntity ||
			!strings.Contains(rec.Body.String(), "the local user has no account") {
			t.Errorf("the local user's rename = %d, want 422 saying there is no account: %.300s", rec.Code, rec.Body)
		}
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleViewer)
		here := env.sessionCookie(ada)
		rename := func(name string) *httptest.ResponseRecorder {
			return env.send(http.MethodPost, "/account/name", url.Values{"name": {name}}, "192.0.2.8", here)
		}
		stored := func() string {
			t.Helper()
			return mustUser(t, env, ada.ID).Name
		}

		page := env.send(http.MethodGet, "/account", nil, "", here)
		for _, want := range []string{`data-testid="name-form"`, `action="/account/name"`, `name="name"`, `value="ada"`} {
			if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), want) {
				t.Errorf("account page (%d) lacks %s", page.Code, want)
			}
		}

		for _, tc := range []struct {
			what, name, message string
			beside              bool // the message is beside the field (else the request was refused before the form)
		}{
			{"empty", "", "A name is needed", true},
			{"only spaces", "   ", "A name is needed", true},
			{"too long", strings.Repeat("é", models.MaxNameLength+1), "is 201 characters long; the limit is 200", true},
			{"a line break", "Ada\nLovelace", "holds a line break", true},
			{"a tab", "Ada\tLovelace", "control character U+0009", true},
			{"an escape", "Ada \x1b[31m<b>red</b>", "control character", false},
		} {
			rec := rename(tc.name)
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422", tc.what, rec.Code)
			}
			if !strings.Contains(body, tc.message) {
				t.Errorf("%s: the answer does not say %q: %.300s", tc.what, tc.message, body)
			}
			if tc.beside {
				if i := strings.Index(body, `id="display_name-error"`); i < 0 || !strings.Contains(body[i:], tc.message) {
					t.Errorf("%s: no message beside the name field", tc.what)
				}
				if !strings.Contains(body, `aria-describedby="display_name-error"`) {
					t.Errorf("%s: the name field does not point to its message", tc.what)
				}
				if tc.name != "" && !strings.Contains(body, `value="`+htmlText(tc.name)+`"`) {
					t.Errorf("%s: the form does not keep the name as typed", tc.what)
				}
			}
			if strings.Contains(body, "<b>red</b>") {
				t.Errorf("%s: the typed markup is on the page unescaped", tc.what)
			}
			if got := stored(); got != "ada" {
				t.Fatalf("%s: the name is %q after a refused change, want it unchanged", tc.what, got)
			}
		}

		// Cross-site: refused before anything happens.
		req := httptest.NewRequest(http.MethodPost, "/account/name", strings.NewReader(url.Values{"name": {"Mallory"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.AddCookie(here)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || stored() != "ada" {
			t.Errorf("cross-site rename = %d (name %q), want 403 and the name unchanged", rec.Code, stored())
		}
		req = httptest.NewRequest(http.MethodPost, "/account/name", strings.NewReader(url.Values{"name": {"Mallory"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		req.AddCookie(here)
		rec = httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || stored() != "ada" {
			t.Errorf("rename from another origin = %d (name %q), want 403 and the name unchanged", rec.Code, stored())
		}

		const name = `Ada "the" <b>Countess</b> C:\tmp`
		rec = rename("  " + name + "  ")
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/account" {
			t.Fatalf("rename = %d to %q, want 303 to /account: %.300s", rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		if flash := flashOf(rec); !strings.Contains(flash, "Your display name is now “"+name+"” (it was “ada”)") {
			t.Errorf("flash %q does not quote the new and old names as typed", flash)
		}
		if got := stored(); got != name {
			t.Errorf("stored name %q, want %q (trimmed)", got, name)
		}
		shown := env.send(http.MethodGet, "/account", nil, "", append([]*http.Cookie{here}, rec.Result().Cookies()...)...).Body.String()
		if !strings.Contains(shown, "“"+htmlText(name)+"”") || strings.Contains(shown, "<b>Countess") {
			t.Errorf("the account page does not show the new name quoted and escaped")
		}
		if !strings.Contains(shown, `value="`+htmlText(name)+`"`) {
			t.Errorf("the name form does not hold the new name")
		}
		// Everywhere at once: the header of any page, and Members.
		if body := env.getAs("/", env.sessionCookie(mustUser(t, env, ada.ID))).Body.String(); !strings.Contains(body, htmlText(name)) {
			t.Errorf("the header does not name the account as it is called now")
		}
		members := env.getAs("/members", env.sessionCookie(owner)).Body.String()
		if !strings.Contains(members, htmlText(name)) {
			t.Errorf("Members does not name the account as it is called now")
		}

		evs, err := env.db.ListAudit(ctx, env.ws.ID, 0, 100)
		must(t, err)
		var changes []models.AuditEvent
		for _, e := range evs {
			if e.Action == models.AuditNameChanged {
				changes = append(changes, e)
			}
		}
		if len(changes) != 1 || changes[0].Target != "ada@a.test" || !strings.Contains(changes[0].Detail, `"ada" → "Ada \"the\" <b>Countess</b> C:\\tmp"`) ||
			changes[0].ActorUserID == nil || *changes[0].ActorUserID != ada.ID || changes[0].Address != "192.0.2.8" {
			t.Errorf("audit of the change: %+v, want one %s naming the account, old → new, by Ada from her address", changes, models.AuditNameChanged)
		}

		// The same name again: said so, nothing written.
		rec = rename(name)
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "already") {
			t.Errorf("the same name again = %d (%q), want 303 saying it is already the name", rec.Code, flashOf(rec))
		}
		evs, err = env.db.ListAudit(ctx, env.ws.ID, 0, 100)
		must(t, err)
		n := 0
		for _, e := range evs {
			if e.Action == models.AuditNameChanged {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d name changes in the audit log after the same name again, want 1", n)
		}
	})
}

// TestRenamedReviewerShownOnFinishedRunAtOnce (rename44): a finished run's
// figures name a browser reviewer by display name. Its page is cached by
// every server process (reportCache) while the run does not change, so a
// reviewer who renamed themselves kept their old name on it until the
// process restarted (the live figures of a running run follow the names:
// TestLiveFiguresNameRenamedReviewer). A rename moves the human ratings
// version of the runs of the workspaces the account rated in, and the page
// names the reviewer as they are called now, and only that way; renamed as
// another reviewer is called, numbered after them.
func TestRenamedReviewerShownOnFinishedRunAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		edith, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "edith@a.test", Name: "Edith Tor", Password: testPassword})
		must(t, err)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		// Ann reviewed before Edith: an Edith renamed "Ann" is "Ann (2)"
		// (numbered by first review: TestDuplicateDisplayNamesNumberedByFirstReview).
		ann, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "ann@a.test", Name: "Ann", Password: testPassword})
		must(t, err)
		for i := range 6 {
			v := float64(1 + (i+1)%3)
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: ann.Email, UserID: &ann.ID, RunID: &a.ID, Score: &v, Lo: 1, Hi: 3})
			must(t, err)
		}
		for i := range 6 {
			v := float64(1 + i%3)
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: edith.Email, UserID: &edith.ID, RunID: &a.ID, Score: &v, Lo: 1, Hi: 3})
			must(t, err)
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {"both"}}, "", owner); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		page := fmt.Sprintf("/runs/%d", a.ID)
		me := env.sessionCookie(edith)
		for _, tc := range []struct {
			rename, want, gone string
		}{
			{"", "Edith Tor", ""},
			{"Edith Renamed", "Edith Renamed", "Edith Tor"},
			{"Edie", "Edie", "Edith Renamed"},
			{"Ann", "Ann (2)", "Edie"},
		} {
			if tc.rename != "" {
				rec := env.send(http.MethodPost, "/account/name", url.Values{"name": {tc.rename}}, "", me)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("rename to %q: %d %.300s", tc.rename, rec.Code, rec.Body)
				}
				me = env.sessionFrom(rec)
				if me == nil {
					me = env.sessionCookie(mustUser(t, env, edith.ID))
				}
			}
			for range 2 { // the second view is the cached one
				rec := env.getAs(page, owner)
				body := rec.Body.String()
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: %d", page, rec.Code)
				}
				if key := htmlText(crit.HumanColumn + "@browser:" + tc.want); !strings.Contains(body, key) {
					i := strings.Index(body, "@browser:")
					t.Errorf("named %q: the page lacks %q: …%s", tc.want, key, body[max(i-100, 0):min(max(i, 0)+100, len(body))])
				}
				if tc.gone != "" && strings.Contains(body, tc.gone) {
					t.Errorf("renamed %q: the finished run's page still names %q", tc.want, tc.gone)
				}
			}
		}
	})
}
