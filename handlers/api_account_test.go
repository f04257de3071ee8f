package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAPIAccountLocalMode (account45): with no account yet, the local user
// asks who it is and is told so (mode "local", no person, no token, owner
// of the default workspace); it has no name to change, and a rename says
// so, as the account page does. There was no account object in the API.
func TestAPIAccountLocalMode(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		api := newAPIClient(t, env)
		a := decode[APIAccount](t, api.get("/api/v1/account", ""), http.StatusOK)
		if a.Mode != "local" || a.User != nil || a.Token != nil || a.Workspace.ID != env.ws.ID || a.Role != string(models.RoleOwner) {
			t.Errorf("local account = %+v, want mode local, no user or token, owner of workspace %d", a, env.ws.ID)
		}
		if want := []string{"read", "rate", "write", "rename_self", "manage"}; !slices.Equal(a.Permissions, want) {
			t.Errorf("local permissions %v, want %v", a.Permissions, want)
		}
		if len(a.Workspaces) != 1 || a.Workspaces[0].ID != env.ws.ID || !a.Workspaces[0].Current || a.Workspaces[0].Role != "owner" {
			t.Errorf("local workspaces %+v, want the default one, current, owner", a.Workspaces)
		}
		rec := api.json(http.MethodPatch, "/api/v1/account", "", map[string]string{"name": "Local"})
		if rec.Code != http.StatusUnprocessableEntity || errorCode(t, rec) != models.EInvalid || !strings.Contains(rec.Body.String(), "the local user has no account") {
			t.Errorf("local rename = %d %.300s, want 422 saying the local user has no account", rec.Code, rec.Body)
		}
	})
}

// TestAPIAccountAnswersTheTokensPerson (account45): a token's account
// answer names its person, its workspace and role, the token (expiry
// included, never the secret) and every workspace of the person with their
// role there, and nothing of the other members. Permissions follow the
// role: a viewer's token reads only; an editor's writes and renames.
func TestAPIAccountAnswersTheTokensPerson(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		bob := env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		lab, err := env.db.CreateWorkspace(ctx, "Ada's <lab>", ada.ID)
		must(t, err)
		// Bob's workspace, which Ada is not in: never listed.
		_, err = env.db.CreateWorkspace(ctx, "Bob's own", bob.ID)
		must(t, err)
		tok, secret, err := env.db.CreateExpiringAPIToken(ctx, env.ws.ID, ada.ID, "nightly", 30*24*time.Hour)
		must(t, err)

		rec := api.get("/api/v1/account", secret)
		a := decode[APIAccount](t, rec, http.StatusOK)
		if a.Mode != "account" || a.User == nil || *a.User != (APIAccountUser{ID: ada.ID, Email: "ada@a.test", Name: "ada"}) {
			t.Errorf("account user = %+v (mode %q), want Ada's", a.User, a.Mode)
		}
		if a.Workspace != (APIWorkspaceRef{ID: env.ws.ID, Name: env.ws.Name}) || a.Role != "editor" {
			t.Errorf("account workspace %+v role %q, want %d as editor", a.Workspace, a.Role, env.ws.ID)
		}
		if want := []string{"read", "rate", "write", "rename_self"}; !slices.Equal(a.Permissions, want) {
			t.Errorf("editor's token permissions %v, want %v", a.Permissions, want)
		}
		if a.Token == nil || a.Token.ID != tok.ID || !a.Token.Current || a.Token.Name != "nightly" || a.Token.ExpiresAt == nil ||
			!a.Token.ExpiresAt.Time().Equal(tok.ExpiresAt.Truncate(time.Microsecond)) || a.Token.UserID != ada.ID {
			t.Errorf("account token %+v, want token %d, current, expiring %v", a.Token, tok.ID, tok.ExpiresAt)
		}
		wantWS := []APIAccountWorkspace{{ID: env.ws.ID, Name: env.ws.Name, Role: "editor", Current: true}, {ID: lab.ID, Name: "Ada's <lab>", Role: "owner"}}
		if !slices.Equal(a.Workspaces, wantWS) {
			t.Errorf("account workspaces %+v, want %+v", a.Workspaces, wantWS)
		}
		body := rec.Body.String()
		for _, leak := range []string{"bob", "Bob's own", secret} {
			if strings.Contains(body, leak) {
				t.Errorf("the account answer holds %q: %.500s", leak, body)
			}
		}
		if rec.Header().Get(TokenExpiresHeader) == "" {
			t.Errorf("the answer to an expiring token lacks %s", TokenExpiresHeader)
		}
		// The role is read at each call: Ada made owner is answered as one.
		must(t, env.db.SetMemberRole(ctx, env.ws.ID, ada.ID, models.RoleOwner))
		a = decode[APIAccount](t, api.get("/api/v1/account", secret), http.StatusOK)
		if a.Role != "owner" || !slices.Contains(a.Permissions, "manage") {
			t.Errorf("after promotion: role %q permissions %v, want owner with manage", a.Role, a.Permissions)
		}

		// A viewer's token reads its account and cannot rename.
		vic := env.createUser(env.ws.ID, "vic@a.test", models.RoleViewer)
		_, vicToken := env.apiToken(env.ws.ID, vic.ID)
		a = decode[APIAccount](t, api.get("/api/v1/account", vicToken), http.StatusOK)
		if a.Role != "viewer" || !slices.Equal(a.Permissions, []string{"read"}) {
			t.Errorf("viewer's token: role %q permissions %v, want viewer with read only", a.Role, a.Permissions)
		}
		rec = api.json(http.MethodPatch, "/api/v1/account", vicToken, map[string]string{"name": "Victor"})
		if rec.Code != http.StatusForbidden || errorCode(t, rec) != "forbidden" || mustUser(t, env, vic.ID).Name != "vic" {
			t.Errorf("a viewer's token renaming = %d %.300s (name %q), want 403 and the name unchanged", rec.Code, rec.Body, mustUser(t, env, vic.ID).Name)
		}

		// A removed member's token gets the API's answer to a token that
		// no longer works, for reading and renaming alike.
		_, err = env.db.RemoveMember(ctx, env.ws.ID, vic.ID, false)
		must(t, err)
		if rec := api.get("/api/v1/account", vicToken); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "not valid") {
			t.Errorf("a removed member's token reading its account = %d %.300s, want 401 not valid", rec.Code, rec.Body)
		}
		if rec := api.json(http.MethodPatch, "/api/v1/account", vicToken, map[string]string{"name": "Victor"}); rec.Code != http.StatusUnauthorized {
			t.Errorf("a removed member's token renaming = %d %.300s, want 401", rec.Code, rec.Body)
		}
	})
}

// TestAPIAccountRename (account45): PATCH /api/v1/account changes the
// token's person's display name with the account page's rules, by the same
// code (models.RenameUser). A refused name answers 422 naming "name" and
// what to do, and writes nothing; a change answers the account with its
// new name (trimmed), is audited in every workspace of the account with
// the token named, and moves on the human ratings version of the runs of
// the workspaces the person rated in; the same name again writes nothing.
func TestAPIAccountRename(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		lab, err := env.db.CreateWorkspace(ctx, "Ada's lab", ada.ID)
		must(t, err)
		_, secret := env.apiToken(env.ws.ID, ada.ID)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
		must(t, err)
		crit := d.rubric.Criteria[1]
		score := 2.0
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[0].ID,
			Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: ada.Email, UserID: &ada.ID, RunID: &run.ID, Score: &score, Lo: 1, Hi: 3})
		must(t, err)
		humans := func() int {
			t.Helper()
			r, err := env.db.GetRun(ctx, run.ID)
			must(t, err)
			return r.HumansVersion
		}
		renames := func(wsID int64) []models.AuditEvent {
			t.Helper()
			evs, err := env.db.ListAudit(ctx, wsID, 0, 100)
			must(t, err)
			var out []models.AuditEvent
			for _, e := range evs {
				if e.Action == models.AuditNameChanged {
					out = append(out, e)
				}
			}
			return out
		}
		before := humans()

		api.invalidRequests = true // some bodies below break the document on purpose
		for _, tc := range []struct {
			what, body string
			status     int
			says       []string
		}{
			{"empty", `{"name": ""}`, 422, []string{`"name"`, "a name is needed"}},
			{"only spaces", `{"name": "   "}`, 422, []string{`"name"`, "a name is needed"}},
			{"too long", `{"name": "` + strings.Repeat("é", models.MaxNameLength+1) + `"}`, 422, []string{`"name"`, "201 characters long; the limit is 200"}},
			{"a line break", `{"name": "Ada\nLovelace"}`, 422, []string{`"name"`, "line break", "write it on one line"}},
			{"a tab", `{"name": "Ada\tLovelace"}`, 422, []string{`"name"`, "control character U+0009", "write the name without it"}},
			{"an escape", `{"name": "Ada \u001b[31m"}`, 422, []string{`"name"`, "control character"}},
			{"no name", `{}`, 422, []string{`"name" is missing`}},
			{"null name", `{"name": null}`, 422, []string{`"name" is missing`}},
			{"another field", `{"name": "Ada", "email": "x@y.test"}`, 400, []string{`"email"`}},
			{"not a string", `{"name": 7}`, 400, []string{`"name"`}},
		} {
			rec := api.call(http.MethodPatch, "/api/v1/account", secret, []byte(tc.body), "application/json")
			if rec.Code != tc.status {
				t.Errorf("%s: status %d, want %d: %.300s", tc.what, rec.Code, tc.status, rec.Body)
			}
			errorCode(t, rec)
			var e APIError
			must(t, json.Unmarshal(rec.Body.Bytes(), &e))
			for _, s := range tc.says {
				if !strings.Contains(e.Error.Message, s) {
					t.Errorf("%s: the answer does not say %s: %q", tc.what, s, e.Error.Message)
				}
			}
			if got := mustUser(t, env, ada.ID).Name; got != "ada" {
				t.Fatalf("%s: the name is %q after a refused change, want it unchanged", tc.what, got)
			}
		}
		if n := len(renames(env.ws.ID)); n != 0 || humans() != before {
			t.Errorf("refused renames wrote %d audit events and moved the humans version %d → %d", n, before, humans())
		}
		api.invalidRequests = false

		const name = `Ada "the" <b>Countess</b>`
		rec := api.json(http.MethodPatch, "/api/v1/account", secret, map[string]string{"name": "  " + name + "  "})
		a := decode[APIAccount](t, rec, http.StatusOK)
		if a.User == nil || a.User.Name != name || a.Token == nil || a.Token.UserName != name {
			t.Errorf("rename answered %+v, want the account named %q", a.User, name)
		}
		if strings.Contains(rec.Body.String(), "<b>") {
			t.Errorf("the answer holds the name's markup unescaped: %.300s", rec.Body)
		}
		if got := mustUser(t, env, ada.ID).Name; got != name {
			t.Errorf("stored name %q, want %q", got, name)
		}
		if humans() != before+1 {
			t.Errorf("the rated run's humans version is %d after the rename, want %d", humans(), before+1)
		}
		for _, ws := range []int64{env.ws.ID, lab.ID} {
			evs := renames(ws)
			if len(evs) != 1 || evs[0].Target != "ada@a.test" || !strings.Contains(evs[0].Detail, `"ada" → "Ada \"the\" <b>Countess</b>"`) ||
				evs[0].ActorUserID == nil || *evs[0].ActorUserID != ada.ID || !strings.Contains(evs[0].Actor, `with API token "matrix"`) || evs[0].Address == "" {
				t.Errorf("audit of workspace %d: %+v, want one name change by Ada's token, old → new, with her address", ws, evs)
			}
		}

		// The same name again: answered, nothing written.
		a = decode[APIAccount](t, api.json(http.MethodPatch, "/api/v1/account", secret, map[string]string{"name": name}), http.StatusOK)
		if a.User == nil || a.User.Name != name || len(renames(env.ws.ID)) != 1 || humans() != before+1 {
			t.Errorf("the same name again: %+v, %d audit events, humans version %d; want the name, 1 event, %d", a.User, len(renames(env.ws.ID)), humans(), before+1)
		}
		// The account page shows it.
		page := env.getAs("/account", env.sessionCookie(mustUser(t, env, ada.ID))).Body.String()
		if !strings.Contains(page, htmlText(name)) {
			t.Errorf("the account page does not show the name set through the API")
		}
		var raw map[string]any
		must(t, json.Unmarshal(rec.Body.Bytes(), &raw))
		if _, ok := raw["token"].(map[string]any)["token"]; ok {
			t.Errorf("the account answer carries the token's secret")
		}
	})
}

// TestAPIReadOnlyToken (account45): a token made read-only on the API
// tokens page reads as its person would, and acts as a viewer whatever the
// person's role: a write (a project, a rename of its person) is refused
// with 403 saying the token is read-only and where to make another, and
// nothing is written. Its account answer names the person's role and a
// viewer's permissions, and the lists show its scope. It may still revoke
// itself. Before, every token could do all its person's role allowed.
func TestAPIReadOnlyToken(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		page := env.sessionCookie(owner)

		// Made on the page: the access is chosen beside the expiry.
		form := env.send(http.MethodGet, "/tokens", nil, "", page).Body.String()
		for _, want := range []string{`<select id="token-scope" name="scope"`, `<label for="token-scope">`, `value="read"`, `value="full" selected`} {
			if !strings.Contains(form, want) {
				t.Errorf("the tokens form lacks %s", want)
			}
		}
		rec := env.send(http.MethodPost, "/tokens", url.Values{"name": {"bad"}, "scope": {"<b>write</b>"}}, "", page)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "&lt;b&gt;write&lt;/b&gt;") || strings.Contains(rec.Body.String(), "<b>write") {
			t.Errorf("an unknown access = %d, want 422 naming it escaped: %.300s", rec.Code, rec.Body)
		}
		if ts, err := env.db.ListAPITokens(ctx, env.ws.ID, owner.ID); err != nil || len(ts) != 0 {
			t.Fatalf("a refused access made tokens: %v %v", ts, err)
		}
		rec = env.send(http.MethodPost, "/tokens", url.Values{"name": {"dashboards"}, "expires": {"30d"}, "scope": {"read"}}, "", page)
		body := rec.Body.String()
		i := strings.Index(body, `class="once-link">`)
		if rec.Code != http.StatusCreated || i < 0 {
			t.Fatalf("making a read-only token = %d: %.300s", rec.Code, body)
		}
		secret := body[i+len(`class="once-link">`):]
		secret = secret[:strings.Index(secret, "<")]
		if !strings.Contains(body, `data-testid="token-scope-shown">read only<`) {
			t.Errorf("the list does not show the token as read only")
		}
		_, full := env.apiToken(env.ws.ID, owner.ID)

		a := decode[APIAccount](t, api.get("/api/v1/account", secret), http.StatusOK)
		if a.Role != "owner" || !slices.Equal(a.Permissions, []string{"read"}) || a.Token == nil || a.Token.Scope != models.TokenScopeRead {
			t.Errorf("read-only token's account: role %q permissions %v token %+v, want owner, [read], scope read", a.Role, a.Permissions, a.Token)
		}
		if a := decode[APIAccount](t, api.get("/api/v1/account", full), http.StatusOK); a.Token == nil || a.Token.Scope != models.TokenScopeFull ||
			!slices.Equal(a.Permissions, []string{"read", "rate", "write", "rename_self", "manage"}) {
			t.Errorf("full token's account: permissions %v token %+v, want all four, scope full", a.Permissions, a.Token)
		}
		if rec := api.get("/api/v1/projects", secret); rec.Code != http.StatusOK {
			t.Errorf("a read-only token reading projects = %d", rec.Code)
		}
		for _, tc := range []struct {
			what, method, target string
			body                 any
		}{
			{"rename", http.MethodPatch, "/api/v1/account", map[string]string{"name": "Mallory"}},
			{"project", http.MethodPost, "/api/v1/projects", map[string]string{"name": "made by a reader"}},
			{"judge", http.MethodPost, "/api/v1/judges", map[string]string{"name": "j", "base_url": "https://judge.example/v1", "model": "m"}},
		} {
			rec := api.json(tc.method, tc.target, secret, tc.body)
			var e APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if rec.Code != http.StatusForbidden || e.Error.Code != "forbidden" || !strings.Contains(e.Error.Message, "read-only") || !strings.Contains(e.Error.Message, "/tokens") {
				t.Errorf("%s with a read-only token = %d %q, want 403 saying the token is read-only and where to make another", tc.what, rec.Code, e.Error.Message)
			}
		}
		if u := mustUser(t, env, owner.ID); u.Name != "owner" {
			t.Errorf("a read-only token renamed its person %q", u.Name)
		}
		if ps, err := env.db.ListProjects(ctx, env.ws.ID); err != nil || slices.ContainsFunc(ps, func(p models.Project) bool { return p.Name == "made by a reader" }) {
			t.Errorf("a read-only token made a project (%v)", err)
		}
		// Listed with its scope, and it may revoke itself.
		var list Page[APIToken]
		list = decode[Page[APIToken]](t, api.get("/api/v1/tokens", full), http.StatusOK)
		scopes := map[string]string{}
		for _, tk := range list.Items {
			scopes[tk.Name] = tk.Scope
		}
		if scopes["dashboards"] != "read" || scopes["matrix"] != "full" {
			t.Errorf("listed scopes %v, want dashboards read and matrix full", scopes)
		}
		if a.Token != nil {
			rec := api.json(http.MethodPost, "/api/v1/tokens/"+strconv.FormatInt(a.Token.ID, 10)+"/revoke", secret, nil)
			if rec.Code != http.StatusOK {
				t.Errorf("a read-only token revoking itself = %d %.300s", rec.Code, rec.Body)
			}
			if rec := api.get("/api/v1/account", secret); rec.Code != http.StatusUnauthorized {
				t.Errorf("the revoked read-only token = %d, want 401", rec.Code)
			}
		}
	})
}
