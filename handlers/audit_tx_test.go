package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// refuseAudit makes every write to the workspaces' audit log fail, as a
// full disk or a lost table would, until the returned function is called.
func refuseAudit(t *testing.T, db *models.DB) (allow func()) {
	t.Helper()
	stmts, undo := []string{
		`CREATE TRIGGER audit48_refuse BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit log refused by the test'); END`,
	}, []string{`DROP TRIGGER audit48_refuse`}
	if db.Dialect == models.Postgres {
		stmts = []string{
			`CREATE OR REPLACE FUNCTION audit48_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit log refused by the test'; END $$`,
			`CREATE TRIGGER audit48_refuse BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit48_refuse()`,
		}
		undo = []string{`DROP TRIGGER audit48_refuse ON audit_events`}
	}
	for _, s := range stmts {
		if err := db.Gorm.Exec(s).Error; err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return func() {
		t.Helper()
		for _, s := range undo {
			if err := db.Gorm.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
}

// countAudit counts the entries of action in workspace wsID's log (0:
// every workspace's, for a workspace made by the action).
func countAudit(t *testing.T, db *models.DB, wsID int64, action string) int64 {
	t.Helper()
	q := db.Gorm.Model(&models.AuditEvent{}).Where("action = ?", action)
	if wsID != 0 {
		q = q.Where("workspace_id = ?", wsID)
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestActionWrittenWithItsAuditEntry (audit48): an action and its audit
// entry are written in one transaction. When the entry cannot be written
// (here a trigger refuses every insert into the log), the action is not
// applied either (the role stays, the token does not work, the link
// still opens, nothing goes to the trash...) and the person is told, on a
// page or in the API's JSON, that nothing was changed and to try again;
// once the log works, the same request does the action and writes its
// entry. Before, the entry was written after the action, outside its
// transaction, and its failure only logged: every case below was applied
// with no entry, and answered as a success.
func TestActionWrittenWithItsAuditEntry(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		db, ws := env.db, env.ws.ID
		// A finished run to share and delete, launched as the local user
		// before any account exists.
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)

		owner := env.createUser(ws, "owner@a.test", models.RoleOwner)
		oc := env.sessionCookie(owner)
		_, bearer := env.apiToken(ws, owner.ID)
		post := func(path string, form url.Values) func() *httptest.ResponseRecorder {
			return func() *httptest.ResponseRecorder { return env.send(http.MethodPost, path, form, "", oc) }
		}
		api := func(method, path string, body any, header http.Header) func() *httptest.ResponseRecorder {
			return func() *httptest.ResponseRecorder {
				var b []byte
				if body != nil {
					b, _ = json.Marshal(body)
				}
				req := httptest.NewRequest(method, path, bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+bearer)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				for k, v := range header {
					req.Header[k] = v
				}
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				return rec
			}
		}
		role := func(wsID, userID int64) models.Role {
			r, err := db.MemberRole(ctx, wsID, userID)
			if models.ErrorCode(err) == models.ENotFound {
				return ""
			}
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		count := func(model any, where string, args ...any) int64 {
			var n int64
			if err := db.Gorm.Model(model).Where(where, args...).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		tokenWorks := func(secret string) bool {
			_, _, _, _, err := db.AuthenticateAPIToken(ctx, secret)
			return err == nil
		}
		n := 0
		member := func(r models.Role) models.User {
			n++
			return env.createUser(ws, fmt.Sprintf("m%d@a.test", n), r)
		}
		// A judge with a real endpoint and a stored key, for the key change.
		real := models.Judge{WorkspaceID: ws, Name: "Real", BaseURL: "https://judge.example/v1", Model: "m", APIKey: "sk-old", TopP: 0.9}
		if err := db.SaveJudge(ctx, &real); err != nil {
			t.Fatal(err)
		}

		type check struct {
			ws      int64 // the workspace whose log gets the entry
			send    func() *httptest.ResponseRecorder
			applied func() bool
		}
		for _, tc := range []struct {
			name, action string
			setup        func() check
		}{
			{"role change", models.AuditMemberRole, func() check {
				m := member(models.RoleEditor)
				return check{ws, post("/members/"+strconv.FormatInt(m.ID, 10)+"/role", url.Values{"role": {"viewer"}}),
					func() bool { return role(ws, m.ID) == models.RoleViewer }}
			}},
			{"ownership given", models.AuditMemberRole, func() check {
				m := member(models.RoleEditor)
				return check{ws, post("/members/"+strconv.FormatInt(m.ID, 10)+"/role", url.Values{"role": {"owner"}}),
					func() bool { return role(ws, m.ID) == models.RoleOwner }}
			}},
			{"member removed", models.AuditMemberRemoved, func() check {
				m := member(models.RoleViewer)
				return check{ws, post("/members/"+strconv.FormatInt(m.ID, 10)+"/remove", url.Values{}),
					func() bool { return role(ws, m.ID) == "" }}
			}},
			{"invite made", models.AuditInviteCreated, func() check {
				return check{ws, post("/members/invites", url.Values{"role": {"viewer"}}),
					func() bool { return count(&models.Invite{}, "workspace_id = ?", ws) == 1 }}
			}},
			{"invite revoked", models.AuditInviteRevoked, func() check {
				inv, _, err := db.CreateInvite(ctx, ws, models.RoleEditor, owner.ID, models.InviteTTL)
				if err != nil {
					t.Fatal(err)
				}
				return check{ws, post("/members/invites/"+strconv.FormatInt(inv.ID, 10)+"/revoke", url.Values{}),
					func() bool {
						return count(&models.Invite{}, "id = ? AND expires_at <= ?", inv.ID, time.Now().UTC()) == 1
					}}
			}},
			{"invite accepted", models.AuditMemberJoined, func() check {
				other, err := db.CreateWorkspace(ctx, "Other team", owner.ID)
				if err != nil {
					t.Fatal(err)
				}
				_, token, err := db.CreateInvite(ctx, other.ID, models.RoleEditor, owner.ID, models.InviteTTL)
				if err != nil {
					t.Fatal(err)
				}
				joiner := member(models.RoleViewer)
				jc := env.sessionCookie(joiner)
				return check{other.ID, func() *httptest.ResponseRecorder {
					return env.send(http.MethodPost, "/invites/"+token, url.Values{}, "", jc)
				}, func() bool { return role(other.ID, joiner.ID) == models.RoleEditor }}
			}},
			{"API token made", auditTokenCreated, func() check {
				before := count(&models.APIToken{}, "user_id = ?", owner.ID)
				return check{ws, post("/tokens", url.Values{"name": {"nightly"}}),
					func() bool { return count(&models.APIToken{}, "user_id = ?", owner.ID) == before+1 }}
			}},
			{"API token revoked", auditTokenRevoked, func() check {
				tok, secret := env.apiToken(ws, owner.ID)
				return check{ws, post("/tokens/"+strconv.FormatInt(tok.ID, 10)+"/revoke", url.Values{}),
					func() bool { return !tokenWorks(secret) }}
			}},
			{"share link made", models.AuditShareCreated, func() check {
				return check{ws, post("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}}),
					func() bool { return count(&models.ShareLink{}, "workspace_id = ?", ws) == 1 }}
			}},
			{"share link revoked (API)", models.AuditShareRevoked, func() check {
				l, token, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: ws, Kind: models.ShareRun, RunID: run.ID})
				if err != nil {
					t.Fatal(err)
				}
				return check{ws, api(http.MethodPost, "/api/v1/shares/"+strconv.FormatInt(l.ID, 10)+"/revoke", nil, nil),
					func() bool { _, err := db.OpenShareLink(ctx, token); return err != nil }}
			}},
			{"judge made (API)", models.AuditJudgeCreated, func() check {
				return check{ws, api(http.MethodPost, "/api/v1/judges", map[string]any{"name": "Fresh", "base_url": "https://judge.example/v1", "model": "m"}, nil),
					func() bool { return count(&models.Judge{}, "workspace_id = ? AND name = ?", ws, "Fresh") == 1 }}
			}},
			{"judge key changed (API)", models.AuditKeyChanged, func() check {
				path := "/api/v1/judges/" + strconv.FormatInt(real.ID, 10)
				got := api(http.MethodGet, path, nil, nil)()
				var body map[string]any
				if err := json.Unmarshal(got.Body.Bytes(), &body); err != nil {
					t.Fatalf("GET %s: %d %v", path, got.Code, err)
				}
				body["api_key"] = "sk-new"
				keyNow := func() string {
					j, err := db.FindJudge(ctx, ws, real.ID)
					if err != nil {
						t.Fatal(err)
					}
					return j.APIKey
				}
				return check{ws, api(http.MethodPut, path, body, http.Header{"If-Match": {got.Header().Get("ETag")}}),
					func() bool { return keyNow() == "sk-new" }}
			}},
			{"password reset issued", models.AuditResetIssued, func() check {
				m := member(models.RoleEditor)
				return check{ws, post("/members/"+strconv.FormatInt(m.ID, 10)+"/reset", url.Values{}),
					func() bool { return count(&models.PasswordReset{}, "user_id = ?", m.ID) == 1 }}
			}},
			{"password changed", models.AuditPasswordChanged, func() check {
				m := member(models.RoleViewer)
				mc := env.sessionCookie(m)
				form := url.Values{"current_password": {testPassword}, "new_password": {"a much longer new secret"}, "new_password_again": {"a much longer new secret"}}
				return check{ws, func() *httptest.ResponseRecorder { return env.send(http.MethodPost, "/account/password", form, "", mc) },
					func() bool {
						u, err := db.FindUser(ctx, m.ID)
						if err != nil {
							t.Fatal(err)
						}
						return models.CheckPassword(u.PasswordHash, "a much longer new secret")
					}}
			}},
			{"other sessions signed out", models.AuditOtherSessionsEnded, func() check {
				m := member(models.RoleViewer)
				mc := env.sessionCookie(m)
				return check{ws, func() *httptest.ResponseRecorder {
					return env.send(http.MethodPost, "/account/sessions", url.Values{}, "", mc)
				},
					func() bool {
						u, err := db.FindUser(ctx, m.ID)
						if err != nil {
							t.Fatal(err)
						}
						return u.SessionEpoch > m.SessionEpoch
					}}
			}},
			{"project renamed", models.AuditRenamed, func() check {
				return check{ws, post("/projects/"+strconv.FormatInt(env.project.ID, 10)+"/rename", url.Values{"name": {"Renamed project"}}),
					func() bool {
						return count(&models.Project{}, "id = ? AND name = ?", env.project.ID, "Renamed project") == 1
					}}
			}},
			{"run to the trash", models.AuditDeleted, func() check {
				return check{ws, post("/runs/"+strconv.FormatInt(run.ID, 10)+"/delete", url.Values{"confirm": {"yes"}}),
					func() bool {
						return count(&models.TrashEntry{}, "kind = ? AND object_id = ?", models.KindRun, run.ID) == 1
					}}
			}},
			{"run restored", models.AuditRestored, func() check {
				var e models.TrashEntry
				if err := db.Gorm.Where("kind = ? AND object_id = ?", models.KindRun, run.ID).First(&e).Error; err != nil {
					t.Fatal(err)
				}
				return check{ws, post("/trash/"+strconv.FormatInt(e.ID, 10)+"/restore", url.Values{}),
					func() bool { return count(&models.TrashEntry{}, "id = ?", e.ID) == 0 }}
			}},
			{"dataset purged", models.AuditPurged, func() check {
				e, _, err := db.Trash(ctx, ws, models.KindDataset, d.dataset.ID, models.Actor{Label: "test"})
				if err != nil {
					t.Fatal(err)
				}
				return check{ws, post("/trash/"+strconv.FormatInt(e.ID, 10)+"/purge", url.Values{"confirm": {"yes"}}),
					func() bool {
						return count(&models.TrashEntry{}, "id = ?", e.ID) == 0 && count(&models.Dataset{}, "id = ?", d.dataset.ID) == 0
					}}
			}},
			// Last: the owner's session moves to the new workspace.
			{"workspace made", models.AuditWorkspaceCreate, func() check {
				return check{0, post("/workspaces", url.Values{"name": {"Team B"}}),
					func() bool { return count(&models.Workspace{}, "name = ?", "Team B") == 1 }}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := tc.setup()
				before := countAudit(t, db, c.ws, tc.action)
				allow := refuseAudit(t, db)
				rec := c.send()
				allow()
				body := rec.Body.String()
				if rec.Code != http.StatusInternalServerError || !strings.Contains(body, "Nothing was changed") || !strings.Contains(body, "Try again") {
					t.Errorf("with the audit log failing: %d %.400s, want 500 saying nothing was changed and to try again", rec.Code, body)
				}
				if c.applied() {
					t.Errorf("with the audit log failing, the action was applied anyway")
				}
				if got := countAudit(t, db, c.ws, tc.action); got != before {
					t.Fatalf("%d %q entries after a refused write, want %d", got, tc.action, before)
				}
				rec = c.send()
				if rec.Code >= 400 {
					t.Fatalf("with the audit log working: %d %.400s", rec.Code, rec.Body)
				}
				if !c.applied() {
					t.Errorf("with the audit log working, the action was not applied")
				}
				if got := countAudit(t, db, c.ws, tc.action); got != before+1 {
					t.Errorf("%d %q entries after the action, want %d", got, tc.action, before+1)
				}
			})
		}
	})
}
